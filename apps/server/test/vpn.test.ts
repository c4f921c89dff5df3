import type { ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeviceVpn, startDeviceVpn } from "../src/features/vpn/server.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { eventually } from "./support/agent.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";
import { createDeviceNamespace, type DeviceNamespace, issueTestCertificates } from "./support/netns.ts";

/**
 * A balenaOS device on the device VPN: Debian's OpenVPN client in the device's own network
 * namespace connects with the credentials config.json gives it and the configuration
 * `/os/v1/config` serves; a device-API and SSH server written from balena's documentation listen
 * behind it (support/balenaos-device.mjs). Actions, "update now", a host shell and commands reach
 * it over the VPN; a wrong key is refused; a disconnect takes it off the VPN.
 */

let t: TestApp;
let ns: DeviceNamespace;
let vpn: DeviceVpn;
let dir: string;
let device: TestDevice;
let owner: { token: string; user: { id: number; username: string } };
let fleetId: number;
let client: ChildProcess;
let fake: ChildProcess;
const calls: { call: string; body: unknown; keyOk: boolean }[] = [];
const events: Record<string, unknown>[] = [];
const API_SECRET = crypto.randomBytes(16).toString("hex");

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The OpenVPN client as balenaOS runs it: the served configuration, with this test's file paths. */
async function startClient(name: string, password: string): Promise<ChildProcess> {
  const served = (await call(t, "GET", "/os/v1/config", device.key)).json as {
    services: { openvpn: { config: string; ca: string } };
  };
  const config = served.services.openvpn.config
    .split("\n")
    .filter((line) => !/^(up|down|up-restart)\b/.test(line))
    .map((line) =>
      line
        .replace("/etc/openvpn/ca.crt", path.join(dir, "device-ca.crt"))
        .replace("/var/volatile/vpn-auth", path.join(dir, `${name}.auth`)),
    )
    .join("\n");
  fs.writeFileSync(path.join(dir, "device-ca.crt"), served.services.openvpn.ca);
  fs.writeFileSync(path.join(dir, `${name}.auth`), `${device.uuid}\n${password}\n`, { mode: 0o600 });
  fs.writeFileSync(path.join(dir, `${name}.conf`), config);
  return ns.spawn("openvpn", ["--config", path.join(dir, `${name}.conf`), "--connect-retry-max", "1"]);
}

const output = (child: ChildProcess) => {
  let text = "";
  child.stdout?.on("data", (chunk) => {
    text += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    text += chunk;
  });
  return () => text;
};

const deviceRow = async () => {
  const { rows } = await t.db.query<{ is_connected_to_vpn: boolean; api_secret: string | null }>(
    `SELECT is_connected_to_vpn, api_secret FROM "device" WHERE id = $1`,
    [device.id],
  );
  const status = await call(t, "GET", `/v7/device(${device.id})?$select=overall_status`, owner.token);
  return { ...rows[0], overall_status: (status.json as { d: { overall_status: string }[] }).d[0]?.overall_status };
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-vpn-test-"));
  ns = await createDeviceNamespace();
  const port = await freePort();
  const subnet = `10.${crypto.randomInt(16, 200)}.${crypto.randomInt(0, 256)}.0/24`;
  t = await createTestApp(
    { FLOTILLA_VPN_PORT: String(port), FLOTILLA_VPN_HOST: ns.hostAddress, FLOTILLA_VPN_SUBNET: subnet },
    { host: ns.hostAddress },
  );
  const certificates = await issueTestCertificates(path.join(dir, "pki"), ns.hostAddress);
  vpn = await startDeviceVpn(t.ctx, pino({ level: "silent" }), {
    port,
    host: ns.hostAddress,
    subnet,
    certificates,
  });
  const created = await t.factories.user({ username: "vpnowner" });
  owner = { token: created.token, user: { id: created.user.id, username: "vpnowner" } };
  const org = await t.factories.organization({ name: "Vpn", admins: [created.user] });
  const fleet = await t.factories.fleet(org, { name: "vpnfleet" });
  fleetId = fleet.id;
  device = await registerDevice(t, await provisioningKeyFor(t, owner.token, fleet.id), fleet);

  fake = ns.spawn("node", [path.join(import.meta.dirname, "support", "balenaos-device.mjs")], {
    DEVICE_UUID: device.uuid,
    DEVICE_KEY: device.key,
    API_URL: t.url,
    API_SECRET,
    POLL_MS: "2000",
  });
  readline.createInterface({ input: fake.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if (typeof parsed.call === "string") calls.push(parsed as (typeof calls)[number]);
    else events.push(parsed);
  });
  client = await startClient("device", device.key);
}, 60_000);

afterAll(async () => {
  client?.kill("SIGKILL");
  fake?.kill("SIGKILL");
  await vpn?.close();
  await ns?.remove();
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a balenaOS device on the device VPN", () => {
  it("hands devices the VPN in config.json and /os/v1/config", async () => {
    const config = await call(t, "POST", "/download-config", owner.token, {
      appId: fleetId,
      version: "6.0.13",
      network: "ethernet",
    });
    expect(config.json).toMatchObject({ vpnEndpoint: ns.hostAddress, vpnPort: t.config.vpn?.port });
    const served = (await call(t, "GET", "/os/v1/config", undefined)).json as {
      services: { openvpn: { config: string; ca: string } };
    };
    expect(served.services.openvpn.config).toContain(`remote ${ns.hostAddress} ${t.config.vpn?.port}`);
    expect(served.services.openvpn.ca).toContain("BEGIN CERTIFICATE");
  });

  it("connects with its uuid and key, shows online, and keeps its Supervisor API secret sealed", async () => {
    await eventually(async () => (await deviceRow())?.is_connected_to_vpn === true, 30_000);
    await eventually(async () => (await deviceRow())?.overall_status === "operational", 10_000);
    const row = await deviceRow();
    expect(row?.api_secret).toMatch(/^sealed:v1:/);
    expect(row?.api_secret).not.toContain(API_SECRET);
  }, 40_000);

  it("refuses a client with a wrong key", async () => {
    const wrong = await startClient("intruder", "not-the-key");
    const said = output(wrong);
    await eventually(async () => /AUTH_FAILED/.test(said()), 20_000).catch((error) => {
      throw new Error(`${error}: ${said()}`);
    });
    wrong.kill("SIGKILL");
    expect(vpn.sessions).toBe(1);
  }, 30_000);

  it("relays actions to the Supervisor API with its key", async () => {
    const blink = await call(t, "POST", "/supervisor/v1/blink", owner.token, { uuid: device.uuid });
    expect(blink.status).toBe(200);
    const reboot = await call(t, "POST", "/supervisor/v1/reboot", owner.token, { uuid: device.uuid });
    expect(reboot.status).toBe(202);
    const restart = await call(t, "POST", `/supervisor/v2/applications/${fleetId}/restart-service`, owner.token, {
      uuid: device.uuid,
      data: { serviceName: "main" },
    });
    expect(restart.status).toBe(200);
    await eventually(async () => calls.length >= 3);
    expect(calls.map(({ call: made }) => made)).toEqual([
      "POST /v1/blink",
      "POST /v1/reboot",
      `POST /v2/applications/${fleetId}/restart-service`,
    ]);
    expect(calls.every(({ keyOk }) => keyOk)).toBe(true);
    expect(calls[2]?.body).toMatchObject({ serviceName: "main" });
  });

  it("tells the device to update at once when a fleet variable changes", async () => {
    const before = calls.length;
    const started = Date.now();
    const created = await call(t, "POST", "/v7/application_environment_variable", owner.token, {
      application: fleetId,
      name: "GREETING",
      value: "hello",
    });
    expect(created.status).toBe(201);
    await eventually(async () => calls.slice(before).some(({ call: made }) => made === "POST /v1/update"), 5000);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("opens a host shell and runs a command over the VPN's SSH, logged in with a one-time key", async () => {
    const received: string[] = [];
    let connected = false;
    const opened = await t.ctx.terminals.open({
      deviceId: device.id,
      uuid: device.uuid,
      userId: owner.user.id,
      target: "host",
      cols: 80,
      rows: 24,
      sink: {
        send: (message) => {
          if (message.event === "ssh connect") connected = true;
          if (message.event === "data") received.push(message.data);
        },
        close: () => undefined,
      },
    });
    expect(opened).toBeDefined();
    await eventually(async () => connected, 15_000);
    t.ctx.terminals.input(opened?.id ?? "", "echo $((6 * 7))\r");
    await eventually(async () => received.join("").includes("42"), 10_000);
    t.ctx.terminals.browserClosed(opened?.id ?? "");
    expect(events.some((event) => event.event === "ssh-login" && event.username === "flotilla")).toBe(true);
    // The key was for that login only.
    expect(await t.ctx.jitKeys.current(device.id)).toEqual([]);
  }, 30_000);

  it("leaves the VPN when the device disconnects", async () => {
    client.kill("SIGTERM");
    await eventually(async () => (await deviceRow())?.is_connected_to_vpn === false, 30_000);
    expect(vpn.sessions).toBe(0);
    const blink = await call(t, "POST", "/supervisor/v1/blink", owner.token, { uuid: device.uuid });
    expect(blink.status).toBe(400);
  }, 40_000);
});
