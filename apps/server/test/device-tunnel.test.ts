import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { getSdk } from "balena-sdk";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type SshGateway, startSshGateway } from "../src/features/ssh-gateway/server.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { eventually } from "./support/agent.ts";
import { provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";
import { sshClientArgs } from "./support/ssh-client.ts";

/**
 * Tunnels to a device's port (issue #22): `balena device tunnel` sends `CONNECT
 * {uuid}.balena:{port}` with Basic `{username}:{token}` (behind the operator's TLS), and the
 * SSH gateway forwards `ssh -W {uuid}.balena:{port}`. The device is a stand-in agent on the real
 * cloudlink socket that connects to 127.0.0.1:{port}, where the test runs an echo service.
 */
const run = promisify(execFile);
let t: TestApp;
let gateway: SshGateway;
let device: TestDevice;
let dir: string;
let echoPort: number;
let echo: net.Server;
let deviceSocket: WebSocket;
const people: Record<string, { username: string; token: string; key: string }> = {};

/** The agent's side (apps/agent/src/tunnel.ts does the same): one local connection per tunnel. */
function connectDevice(key: string) {
  const socket = new WebSocket(`${t.url.replace(/^http/, "ws")}/cloudlink/v1/connect`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const send = (frame: Record<string, unknown>) => socket.send(JSON.stringify(frame));
  const local = new Map<string, net.Socket>();
  socket.on("message", (raw) => {
    const frame = JSON.parse(raw.toString()) as { type: string; tunnel: string; port?: number; data?: string };
    if (frame.type === "tunnel-open") {
      const connection = net.connect({ host: "127.0.0.1", port: frame.port ?? 0 });
      local.set(frame.tunnel, connection);
      let connected = false;
      connection.on("connect", () => {
        connected = true;
        send({ type: "tunnel-open", tunnel: frame.tunnel });
      });
      connection.on("data", (data) =>
        send({ type: "tunnel-data", tunnel: frame.tunnel, data: data.toString("base64") }),
      );
      connection.on("error", () => undefined);
      connection.on("close", () => {
        if (!local.delete(frame.tunnel)) return;
        if (connected) send({ type: "tunnel-close", tunnel: frame.tunnel, reason: "closed" });
        else
          send({
            type: "tunnel-close",
            tunnel: frame.tunnel,
            reason: "refused",
            message: `Device is not listening on port ${frame.port}`,
          });
      });
    } else if (frame.type === "tunnel-data") {
      local.get(frame.tunnel)?.write(Buffer.from(frame.data ?? "", "base64"));
    } else if (frame.type === "tunnel-close") {
      local.get(frame.tunnel)?.end();
      local.delete(frame.tunnel);
    }
  });
  return new Promise<WebSocket>((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** balena-cli's CONNECT (src/utils/tunnel.ts there), without the TLS the operator's terminator adds. */
async function connectThroughApi(target: string, auth: string | undefined) {
  const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(t.url).port) });
  await new Promise((resolve) => socket.once("connect", resolve));
  const headers = [`CONNECT ${target} HTTP/1.0`];
  if (auth) headers.push(`Proxy-Authorization: Basic ${Buffer.from(auth).toString("base64")}`);
  socket.write(`${headers.join("\r\n")}\r\n\r\n`);
  let received = "";
  socket.on("data", (data) => {
    received += data.toString();
  });
  const closed = new Promise((resolve) => socket.once("close", resolve));
  return {
    socket,
    closed,
    get received() {
      return received;
    },
  };
}

async function personWithKey(name: string) {
  const person = await t.factories.user({ username: name });
  const file = path.join(dir, `id_${name}`);
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", file]);
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(person.token);
  await sdk.models.key.create("laptop", fs.readFileSync(`${file}.pub`, "utf8"));
  people[name] = { username: name, token: person.token, key: file };
  return person;
}

const tunnelAudits = async () =>
  (
    await t.db.query<{ actor_user: number; details: Record<string, unknown> }>(
      `SELECT actor_user, details FROM "audit_event" WHERE action = 'device_tunnel' ORDER BY id`,
    )
  ).rows;

beforeAll(async () => {
  t = await createTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-tunnel-"));
  gateway = await startSshGateway(t.ctx, pino({ level: "silent" }), { port: 0, host: "127.0.0.1" });
  // The device's service: answers one line and hangs up.
  echo = net.createServer((socket) => socket.once("data", (data) => socket.end(`echo:${data.toString().trim()}\n`)));
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  echoPort = (echo.address() as net.AddressInfo).port;
  const owner = await personWithKey("tunneler");
  const org = await t.factories.organization({ name: "Tunnels", admins: [owner.user] });
  const fleet = await t.factories.fleet(org, { name: "tunnelled" });
  const observer = await personWithKey("watcher");
  await t.factories.fleetMember(observer.user, fleet, "observer");
  const provisioning = await provisioningKeyFor(t, owner.token, fleet.id);
  device = await registerDevice(t, provisioning, fleet, { os_version: "balenaOS 6.1.0" });
  deviceSocket = await connectDevice(device.key);
  await eventually(async () => (await t.ctx.devices.relay.ownerOf(device.id)) !== undefined);
}, 60_000);

afterAll(async () => {
  deviceSocket?.close();
  echo?.close();
  await gateway?.close();
  await t?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("balena device tunnel (HTTP CONNECT)", () => {
  it("joins the connection to the device's port once the device connected, and audits it", async () => {
    const tunnel = await connectThroughApi(`${device.uuid}.balena:${echoPort}`, `tunneler:${people.tunneler?.token}`);
    await eventually(async () => tunnel.received.startsWith("HTTP/1.0 200"));
    tunnel.socket.write("ping\n");
    await tunnel.closed;
    expect(tunnel.received).toBe("HTTP/1.0 200 Connection Established\r\n\r\necho:ping\n");
    await eventually(async () =>
      (await tunnelAudits()).some(
        (row) =>
          row.details.via === "connect" &&
          row.details.device === device.uuid &&
          row.details.port === echoPort &&
          row.details.connected === true &&
          row.details.bytes_to_device === 5,
      ),
    );
  });

  it("answers with the status balena-cli prints for what it cannot do", async () => {
    const status = async (target: string, auth: string | undefined) => {
      const tunnel = await connectThroughApi(target, auth);
      await tunnel.closed;
      return tunnel.received.split("\r\n")[0];
    };
    const owner = `tunneler:${people.tunneler?.token}`;
    expect(await status(`${device.uuid}.balena:${echoPort}`, undefined)).toBe(
      "HTTP/1.0 407 Proxy Authentication Required",
    );
    expect(await status(`${device.uuid}.balena:${echoPort}`, "tunneler:wrong-token")).toBe(
      "HTTP/1.0 407 Proxy Authentication Required",
    );
    expect(await status(`${device.uuid}.balena:${echoPort}`, `watcher:${people.watcher?.token}`)).toBe(
      "HTTP/1.0 403 Forbidden",
    );
    expect(await status(`${"0".repeat(32)}.balena:${echoPort}`, owner)).toBe(
      `HTTP/1.0 404 Device not found: ${"0".repeat(32)}`,
    );
    expect(await status("example.com:443", owner)).toBe(
      "HTTP/1.0 400 Bad Request: CONNECT {device uuid}.balena:{port}",
    );
    // Nothing listens on the device's port 1.
    expect(await status(`${device.uuid}.balena:1`, owner)).toBe("HTTP/1.0 502 Device is not listening on port 1");
  });
});

describe("ssh -W through the SSH gateway", () => {
  const forward = (who: string, target: string) =>
    new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(
        "ssh",
        [...sshClientArgs(gateway.port, people[who]?.key ?? ""), "-W", target, `${who}@127.0.0.1`],
        { stdio: "pipe" },
      );
      let stdout = "";
      child.stdout.on("data", (data: Buffer) => {
        stdout += data.toString();
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout }));
      child.stdin.write("hello\n");
    });

  it("forwards to the device's port for a user allowed into its host, and refuses others", async () => {
    const allowed = await forward("tunneler", `${device.uuid}.balena:${echoPort}`);
    expect(allowed.stdout).toBe("echo:hello\n");
    const observer = await forward("watcher", `${device.uuid}.balena:${echoPort}`);
    expect(observer.code).not.toBe(0);
    expect(observer.stdout).toBe("");
    await eventually(async () => (await tunnelAudits()).some((row) => row.details.via === "ssh"));
  }, 30_000);
});
