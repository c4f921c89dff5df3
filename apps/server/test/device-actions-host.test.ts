import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { Agent, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { type AgentRequest, connectAgent, eventually } from "./support/agent.ts";
import { provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * The device actions host (issue #22): balena-sdk's `device.startOsUpdate` posts to
 * `https://actions.{deviceUrlsBase}/v2/{uuid}/resinhup`. Here a TLS terminator (as in front of a
 * real server) answers for actions.devices.test and passes the stream to the API, and the SDK's
 * HTTPS agent resolves that name to it: the SDK runs unchanged.
 */
const BASE = "devices.test";
let t: TestApp;
let sdk: BalenaSDK;
let terminator: tls.Server;
let port: number;
let device: TestDevice;
let agent: Awaited<ReturnType<typeof connectAgent>>;
const originalAgent = https.globalAgent;
let originalDispatcher: Dispatcher;
const received: AgentRequest[] = [];

function selfSignedCertificate(name: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-actions-"));
  execFileSync(
    "openssl",
    [
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"],
      ["-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")],
      ["-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`],
    ].flat(),
    { stdio: "ignore" },
  );
  const pair = { key: fs.readFileSync(path.join(dir, "key.pem")), cert: fs.readFileSync(path.join(dir, "cert.pem")) };
  fs.rmSync(dir, { recursive: true, force: true });
  return pair;
}

beforeAll(async () => {
  t = await createTestApp({ FLOTILLA_DEVICE_URLS_BASE_DOMAIN: BASE });
  const { key, cert } = selfSignedCertificate(`actions.${BASE}`);
  const apiPort = Number(new URL(t.url).port);
  terminator = tls.createServer({ key, cert }, (socket) => {
    const upstream = net.connect(apiPort, "127.0.0.1");
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => terminator.listen(0, "127.0.0.1", resolve));
  port = (terminator.address() as net.AddressInfo).port;
  // "DNS" for actions.devices.test, and trust in the terminator's certificate, for the SDK's
  // fetch and for node's https.
  const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
    options?.all ? callback(null, [{ address: "127.0.0.1", family: 4 }]) : callback(null, "127.0.0.1", 4)) as never;
  https.globalAgent = new https.Agent({ ca: cert, lookup });
  originalDispatcher = getGlobalDispatcher();
  setGlobalDispatcher(new Agent({ connect: { ca: cert, lookup } }));

  const owner = await t.factories.user();
  const org = await t.factories.organization({ name: "ActionsCo", admins: [owner.user] });
  const fleet = await t.factories.fleet(org, { name: "actions-fleet" });
  device = await registerDevice(t, await provisioningKeyFor(t, owner.token, fleet.id), fleet, {
    os_version: "balenaOS 6.1.0",
    os_variant: "prod",
  });
  agent = await connectAgent(t.url, device.key, (request) => {
    received.push(request);
    return { status: 200, body: { status: "triggered", lastRun: Date.now() } };
  });
  await eventually(async () => {
    const { rows } = await t.db.query<{ on: boolean }>(`SELECT is_connected_to_vpn AS on FROM device WHERE id = $1`, [
      device.id,
    ]);
    return rows[0]?.on === true;
  });
  sdk = getSdk({ apiUrl: t.url, deviceUrlsBase: `${BASE}:${port}`, dataDirectory: false });
  await sdk.auth.loginWithToken(owner.token);
});
afterAll(async () => {
  https.globalAgent = originalAgent;
  if (originalDispatcher) setGlobalDispatcher(originalDispatcher);
  await agent?.close();
  terminator?.close();
  await t?.close();
});

describe("the device actions host", () => {
  it("answers balena-sdk's startOsUpdate sent to https://actions.{deviceUrlsBase}", async () => {
    const answer = await sdk.models.device.startOsUpdate(device.uuid, "6.2.4");
    expect(answer).toMatchObject({ status: "triggered", action: "resinhup", parameters: { target_version: "6.2.4" } });
    expect(received.at(-1)).toMatchObject({ action: "resinhup", data: { run: true } });
  });

  it("serves device actions only under that name; the API keeps its own", async () => {
    const viaActions = (pathname: string) =>
      new Promise<number>((resolve, reject) => {
        https
          .get({ host: `actions.${BASE}`, port, path: pathname }, (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          })
          .on("error", reject);
      });
    expect(await viaActions("/v7/device")).toBe(404);
    expect(await viaActions("/actor/v1/whoami")).toBe(404);
    // An action path without a token: the API's own refusal, not the host's.
    expect(await viaActions(`/v1/${device.uuid}/resinhup`)).toBe(401);
    expect((await fetch(`${t.url}/v7/device_type?$top=1`)).status).toBe(200);
  });
});
