import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
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
 * The SSH gateway as balena-cli drives it (`balena ssh {uuid} [service]` runs Debian's OpenSSH
 * client as `ssh -t -p PORT -o … {username}@{host} "host {uuid}"`): a stored key logs in, the
 * session reaches the device's shell over cloudlink, with the web terminal's checks and audit.
 * The device is a stand-in agent on the real cloudlink socket whose shells are real `/bin/sh`
 * processes, so the shell's arithmetic proves the command ran on "the device".
 */
const run = promisify(execFile);
let t: TestApp;
let gateway: SshGateway;
let device: TestDevice;
let dir: string;
let deviceSocket: WebSocket;
const shells = new Map<string, ChildProcess>();
const opened: { target: string }[] = [];
const people: Record<string, { username: string; id: number; key: string }> = {};

/** The device's side of cloudlink: each terminal-open starts a shell; Ctrl-D ends its input. */
function connectDevice(key: string) {
  const socket = new WebSocket(`${t.url.replace(/^http/, "ws")}/cloudlink/v1/connect`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const send = (frame: Record<string, unknown>) => socket.send(JSON.stringify(frame));
  socket.on("message", (raw) => {
    const frame = JSON.parse(raw.toString()) as { type: string; session: string; target?: string; data?: string };
    if (frame.type === "terminal-open") {
      opened.push({ target: frame.target ?? "" });
      const shell = spawn("/bin/sh", [], { stdio: "pipe" });
      shells.set(frame.session, shell);
      shell.stdout.on("data", (data: Buffer) =>
        send({ type: "terminal-data", session: frame.session, data: data.toString() }),
      );
      shell.stderr.on("data", (data: Buffer) =>
        send({ type: "terminal-data", session: frame.session, data: data.toString() }),
      );
      shell.on("exit", () => {
        if (shells.delete(frame.session)) send({ type: "terminal-close", session: frame.session, reason: "exited" });
      });
      send({ type: "terminal-open", session: frame.session });
    } else if (frame.type === "terminal-data") {
      const shell = shells.get(frame.session);
      const [text = "", ...eof] = (frame.data ?? "").split("\u0004");
      shell?.stdin?.write(text);
      if (eof.length > 0) shell?.stdin?.end();
    } else if (frame.type === "terminal-close") {
      shells.get(frame.session)?.kill();
      shells.delete(frame.session);
    }
  });
  return new Promise<WebSocket>((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** balena-cli's ssh invocation (src/utils/ssh.ts there), with a chosen key and no user configuration. */
function ssh(who: string, command: string, input: string, key = people[who]?.key ?? "") {
  const args = [...sshClientArgs(gateway.port, key), "-t", `${people[who]?.username}@127.0.0.1`, command];
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("ssh", args, { stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
    });
    child.stderr.on("data", (data: Buffer) => {
      stderr += data.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function keyPair(name: string) {
  const file = path.join(dir, name);
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", file]);
  return { file, publicKey: fs.readFileSync(`${file}.pub`, "utf8").trim() };
}

/** A user who stored an SSH key through balena-sdk, as `balena key add` does. */
async function personWithKey(name: string) {
  const person = await t.factories.user({ username: name });
  const pair = await keyPair(`id_${name}`);
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(person.token);
  await sdk.models.key.create(`${name}'s laptop`, pair.publicKey);
  people[name] = { username: name, id: person.user.id, key: pair.file };
  return person;
}

beforeAll(async () => {
  t = await createTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-ssh-"));
  gateway = await startSshGateway(t.ctx, pino({ level: "silent" }), { port: 0, host: "127.0.0.1" });
  const owner = await personWithKey("ownerperson");
  const org = await t.factories.organization({ name: "Gate", admins: [owner.user] });
  const fleet = await t.factories.fleet(org, { name: "gated" });
  const observer = await personWithKey("lookeronly");
  await t.factories.fleetMember(observer.user, fleet, "observer");
  const provisioning = await provisioningKeyFor(t, owner.token, fleet.id);
  device = await registerDevice(t, provisioning, fleet, { os_version: "balenaOS 6.1.0" });
  // A release whose service `main` runs on the device.
  const release = await t.factories.release(fleet);
  const { rows: services } = await t.db.query<{ id: number }>(
    `INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id`,
    [fleet.id],
  );
  const { rows: images } = await t.db.query<{ id: number }>(
    `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'r/main', 'success') RETURNING id`,
    [services[0]?.id],
  );
  await t.db.query(
    `INSERT INTO "image_install" (device, installs__image, is_provided_by__release, status) VALUES ($1, $2, $3, 'Running')`,
    [device.id, images[0]?.id, release.id],
  );
  deviceSocket = await connectDevice(device.key);
  await eventually(async () => (await t.ctx.devices.relay.ownerOf(device.id)) !== undefined);
}, 60_000);

afterAll(async () => {
  deviceSocket?.close();
  for (const shell of shells.values()) shell.kill();
  await gateway?.close();
  await t?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("balena ssh through the gateway", () => {
  it("reaches the device's host shell with a stored key, and audits the session", async () => {
    const result = await ssh("ownerperson", `host ${device.uuid}`, "echo inside-$((6*7))\n");
    expect(result.stdout).toContain("inside-42");
    expect(result.code).toBe(0);
    await eventually(async () => {
      const { rows } = await t.db.query<{ actor_user: number; details: Record<string, unknown> }>(
        `SELECT actor_user, details FROM "audit_event" WHERE action = 'terminal_session' AND details->>'device' = $1`,
        [device.uuid],
      );
      const row = rows[0];
      return (
        row !== undefined &&
        row.actor_user === people.ownerperson?.id &&
        row.details.via === "ssh" &&
        row.details.target === "host" &&
        row.details.connected === true &&
        row.details.end_reason === "exited"
      );
    });
  }, 30_000);

  it("refuses a key the user did not store, and a user with another's key", async () => {
    const stranger = await keyPair("id_stranger");
    const other = await ssh("ownerperson", `host ${device.uuid}`, "echo no\n", stranger.file);
    expect(other.code).toBe(255);
    expect(other.stderr).toContain("Permission denied (publickey)");
    const borrowed = await ssh("lookeronly", `host ${device.uuid}`, "echo no\n", people.ownerperson?.key);
    expect(borrowed.code).toBe(255);
    expect(borrowed.stdout).not.toContain("no");
  }, 30_000);

  it("refuses a user without ssh permission on the device, naming why", async () => {
    const opens = opened.length;
    const result = await ssh("lookeronly", `host ${device.uuid}`, "echo inside-$((6*7))\n");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("You are not allowed to do this.");
    expect(result.stdout).not.toContain("inside-42");
    expect(opened.length).toBe(opens);
  }, 30_000);

  it("lists the service containers as balena-cli asks, and enters a service's shell", async () => {
    const listing = await ssh(
      "ownerperson",
      `host ${device.uuid} "$(if [ -f /usr/bin/balena ]; then echo "balena"; else echo "docker"; fi)" ps --format "{{.ID}} {{.Names}}"`,
      "",
    );
    expect(listing.code).toBe(0);
    expect(listing.stdout).toMatch(/^main main_\d+_\d+_[0-9a-f]{32}$/m);
    const result = await ssh("ownerperson", `enter ${device.uuid} main`, "echo service-$((2+3))\n");
    expect(result.stdout).toContain("service-5");
    expect(opened.at(-1)).toEqual({ target: "main" });
  }, 30_000);

  it("names the problem with a command it does not know or a device nobody may see", async () => {
    const unknown = await ssh("ownerperson", "reboot now", "");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Unknown command: reboot");
    const missing = await ssh("ownerperson", `host ${"0".repeat(32)}`, "");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`Device not found: ${"0".repeat(32)}`);
  }, 30_000);
});
