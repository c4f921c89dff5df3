// biome-ignore-all lint/style/noRestrictedImports: two real API instances are built with the server's own modules, as its cluster test does (no mock of our server).
import crypto from "node:crypto";
import type { TerminalServerMessage } from "@flotilla/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createFactories } from "../../server/test/factories.ts";
import { clusterUnreachable, type Instance, useTwoInstances } from "../../server/test/support/cluster.ts";
import { createHttp } from "../src/protocol/http.ts";
import { startSimulator } from "../src/sim/simulator.ts";
import { apiWithFleet, eventually, type TestApp } from "./support.ts";

/**
 * The web terminal against the real API and a simulated device (issue #10, spec 2 §7): the
 * browser's websocket `GET /terminal/v1/connect` authenticates with its first message, the API
 * relays the session over cloudlink to the device's sandboxed shell, checks device.ssh-host /
 * device.ssh, local mode, running services and the OS version, audits every session, and
 * carries it across two instances through Redis.
 */

/** A browser's terminal socket: what it received, and the shell's text so far. */
async function openTerminal(
  apiUrl: string,
  auth: { token: string; uuid: string; target: string; cols?: number; rows?: number },
) {
  const socket = new WebSocket(`${apiUrl.replace(/^http/, "ws")}/terminal/v1/connect`);
  const messages: TerminalServerMessage[] = [];
  let text = "";
  socket.on("message", (raw) => {
    const message = JSON.parse(raw.toString()) as TerminalServerMessage;
    messages.push(message);
    if (message.event === "data") text += message.data;
  });
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  socket.send(JSON.stringify({ event: "authentication", cols: 80, rows: 24, ...auth }));
  const terminal = {
    socket,
    messages,
    closed,
    get text() {
      return text;
    },
    send: (message: Record<string, unknown>) => socket.send(JSON.stringify(message)),
    type: (data: string) => socket.send(JSON.stringify({ event: "data", data })),
    /** Waits for the shell's text to hold `wanted` (after what it held when asked). */
    async read(wanted: string) {
      const from = text.length;
      await eventually(() => text.slice(from).includes(wanted) || text.includes(wanted), 10_000, 20);
    },
    /** Waits for "ssh connect" or an error: answers the error's reason, or "connected". */
    async outcome(): Promise<string> {
      return eventually(
        () => {
          const error = messages.find((m) => m.event === "error");
          if (error && error.event === "error") return error.reason;
          return messages.some((m) => m.event === "ssh connect") ? "connected" : undefined;
        },
        20_000,
        20,
      );
    },
    async close() {
      socket.close();
      await closed;
    },
  };
  return terminal;
}

/** A fleet release with the services `main` and `worker`, which the simulated device runs. */
async function releaseWithServices(t: { db: TestApp["db"]; factories: TestApp["factories"] }, fleet: { id: number }) {
  const release = await t.factories.release(fleet, { commit: crypto.randomBytes(16).toString("hex") });
  for (const name of ["main", "worker"]) {
    const { rows: services } = await t.db.query<{ id: number }>(
      `INSERT INTO "service" (application, service_name) VALUES ($1, $2) RETURNING id`,
      [fleet.id, name],
    );
    const { rows: images } = await t.db.query<{ id: number }>(
      `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, $2, 'success') RETURNING id`,
      [services[0]?.id, `r/${name}`],
    );
    await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [
      images[0]?.id,
      release.id,
    ]);
  }
  await t.db.query(`UPDATE "application" SET should_be_running__release = $2 WHERE id = $1`, [fleet.id, release.id]);
}

const audits = async (db: TestApp["db"], uuid: string) =>
  (
    await db.query<{ actor_user: number; details: Record<string, unknown> }>(
      `SELECT actor_user, details FROM "audit_event" WHERE action = 'terminal_session' AND details->>'device' = $1 ORDER BY id`,
      [uuid],
    )
  ).rows;

describe("web terminal on one instance", () => {
  let t: TestApp;
  let simulator: Awaited<ReturnType<typeof startSimulator>>;
  let uuid: string;
  let fleet: Awaited<ReturnType<typeof apiWithFleet>>["fleet"];
  const tokens: Record<string, string> = {};
  const users: Record<string, number> = {};
  const http = createHttp({ connections: 4 });

  beforeAll(async () => {
    const setup = await apiWithFleet({ paid: true });
    ({ t, fleet } = setup);
    tokens.owner = setup.owner.token;
    users.owner = setup.owner.user.id;
    for (const role of ["observer", "operator"]) {
      const user = await t.factories.user();
      await t.factories.fleetMember(user.user, fleet, role);
      tokens[role] = user.token;
      users[role] = user.user.id;
    }
    tokens.stranger = (await t.factories.user()).token;
    await releaseWithServices(t, fleet);
    simulator = await startSimulator({
      apiUrl: t.url,
      provisioningKey: setup.provisioningKey,
      fleetId: fleet.id,
      count: 1,
      intervalMs: 1000,
      disconnectChance: 0,
      http,
      log: () => {},
    });
    uuid = simulator.devices[0]?.uuid ?? "";
    // Online on cloudlink, and both services reported running.
    await eventually(async () => {
      const { rows } = await t.db.query(
        `SELECT 1 FROM "device" d JOIN "image_install" ii ON ii.device = d.id
          WHERE d.uuid = $1 AND d.is_connected_to_vpn AND ii.status = 'Running'`,
        [uuid],
      );
      return rows.length === 2;
    }, 40_000);
  }, 90_000);
  afterAll(async () => {
    await simulator?.stop();
    await http.close();
    await t?.close();
  });

  it("opens a Host OS session: ssh connect, echo hello answers hello, resize reaches the shell", async () => {
    const terminal = await openTerminal(t.url, { token: tokens.owner as string, uuid, target: "host" });
    expect(await terminal.outcome()).toBe("connected");
    await terminal.read(`root@${uuid.slice(0, 7)}:~# `);
    terminal.type("echo hello\r");
    await terminal.read("echo hello\r\nhello\r\n");
    terminal.send({ event: "resize", cols: 132, rows: 43 });
    terminal.type("stty size\r");
    await terminal.read("43 132\r\n");
    terminal.type("cat /etc/os-release\r");
    await terminal.read('PRETTY_NAME="balenaOS');
    await terminal.close();
    // The session is audited when it ends: who, which device and target, from when to when.
    const [row] = await eventually(async () => {
      const rows = await audits(t.db, uuid);
      return rows.length > 0 ? rows : undefined;
    });
    expect(row?.actor_user).toBe(users.owner);
    expect(row?.details).toMatchObject({
      device: uuid,
      device_id: simulator.devices[0]?.deviceId,
      target: "host",
      connected: true,
      end_reason: "closed",
    });
    const started = Date.parse(String(row?.details.started_at));
    const ended = Date.parse(String(row?.details.ended_at));
    expect(ended).toBeGreaterThanOrEqual(started);
    expect(Date.now() - started).toBeLessThan(120_000);
  });

  it("opens a service session in the service's container with its environment; exit ends it", async () => {
    const terminal = await openTerminal(t.url, { token: tokens.operator as string, uuid, target: "worker" });
    expect(await terminal.outcome()).toBe("connected");
    await terminal.read("root@worker:/usr/src/app# ");
    terminal.type("echo $BALENA_SERVICE_NAME\r");
    await terminal.read("worker\r\n");
    terminal.type("exit\r");
    expect(await terminal.closed).toBe(1000);
    expect(terminal.messages.at(-1)).toMatchObject({ event: "error", reason: "exited" });
  });

  it("refuses an observer (no device.ssh-host nor device.ssh), a stranger and a bad token", async () => {
    for (const target of ["host", "main"]) {
      const terminal = await openTerminal(t.url, { token: tokens.observer as string, uuid, target });
      expect(await terminal.outcome()).toBe("forbidden");
      expect(await terminal.closed).toBe(1000);
    }
    const stranger = await openTerminal(t.url, { token: tokens.stranger as string, uuid, target: "host" });
    expect(await stranger.outcome()).toBe("device_not_found");
    const forged = await openTerminal(t.url, { token: "not-a-key", uuid, target: "host" });
    expect(await forged.outcome()).toBe("unauthorized");
    // A first message that is no authentication is unauthorized too.
    const socket = new WebSocket(`${t.url.replace(/^http/, "ws")}/terminal/v1/connect`);
    const first = new Promise<string>((resolve) => socket.once("message", (raw) => resolve(raw.toString())));
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ event: "data", data: "ls\r" }));
    expect(JSON.parse(await first)).toMatchObject({ event: "error", reason: "unauthorized" });
    socket.close();
  });

  it("offers a service only while its container runs, and none in local mode", async () => {
    const missing = await openTerminal(t.url, { token: tokens.owner as string, uuid, target: "nope" });
    expect(await missing.outcome()).toBe("service_not_running");
    const deviceId = simulator.devices[0]?.deviceId;
    await t.db.query(
      `INSERT INTO "device_config_variable" (device, name, value) VALUES ($1, 'BALENA_SUPERVISOR_LOCAL_MODE', '1')`,
      [deviceId],
    );
    try {
      const local = await openTerminal(t.url, { token: tokens.owner as string, uuid, target: "main" });
      expect(await local.outcome()).toBe("local_mode");
      // The host OS stays reachable in local mode.
      const host = await openTerminal(t.url, { token: tokens.owner as string, uuid, target: "host" });
      expect(await host.outcome()).toBe("connected");
      await host.close();
    } finally {
      await t.db.query(`DELETE FROM "device_config_variable" WHERE device = $1`, [deviceId]);
    }
  });

  it("answers device_offline for a device without cloudlink, and host OS access by OS version", async () => {
    const offline = await t.factories.device(fleet);
    await t.db.query(`UPDATE "device" SET os_version = 'balenaOS 6.1.0' WHERE id = $1`, [offline.id]);
    const terminal = await openTerminal(t.url, { token: tokens.owner as string, uuid: offline.uuid, target: "host" });
    expect(await terminal.outcome()).toBe("device_offline");

    const hostos = async (device: string, token: string) => {
      const response = await fetch(`${t.url}/access/v1/hostos/${device}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: response.status, code: response.headers.get("x-flotilla-error-code") };
    };
    expect(await hostos(uuid, tokens.owner as string)).toEqual({ status: 200, code: null });
    expect(await hostos(uuid, tokens.operator as string)).toEqual({ status: 200, code: null });
    expect(await hostos(uuid, tokens.observer as string)).toEqual({ status: 403, code: "forbidden" });
    expect(await hostos(uuid, tokens.stranger as string)).toEqual({ status: 404, code: "device_not_found" });
    const old = await t.factories.device(fleet);
    await t.db.query(`UPDATE "device" SET os_version = 'Resin OS 2.7.4' WHERE id = $1`, [old.id]);
    expect(await hostos(old.uuid, tokens.owner as string)).toEqual({
      status: 403,
      code: "host_os_access_not_supported",
    });
    const refused = await openTerminal(t.url, { token: tokens.owner as string, uuid: old.uuid, target: "host" });
    expect(await refused.outcome()).toBe("host_os_not_supported");
  });

  it("ends the sessions of a device whose cloudlink socket drops", async () => {
    const terminal = await openTerminal(t.url, { token: tokens.owner as string, uuid, target: "host" });
    expect(await terminal.outcome()).toBe("connected");
    simulator.devices[0]?.runtime.cloudlink.drop();
    expect(await terminal.closed).toBe(1000);
    expect(terminal.messages.at(-1)).toMatchObject({ event: "error", reason: "ssh_disconnected" });
  });
});

const unreachable = await clusterUnreachable();
if (unreachable) console.warn(`terminal cluster: skipped, ${unreachable}`);

describe.skipIf(unreachable !== undefined)("web terminal across two instances with Redis", () => {
  const instances = useTwoInstances("terminal");
  const http = createHttp({ connections: 4 });
  let simulator: Awaited<ReturnType<typeof startSimulator>> | undefined;
  // Runs before the instances close (after-hooks run in reverse order).
  afterAll(async () => {
    await simulator?.stop();
    await http.close();
  });

  it("relays a session from the browser's instance to the device's, and audits it when the instance stops", async () => {
    const [a, b] = instances as [Instance, Instance];
    const factories = createFactories(a.db.orm);
    const owner = await factories.user();
    const token = await a.ctx.tokens.start(owner);
    const org = await factories.organization({ name: "Terminal cluster", admins: [owner] });
    await a.db.query(
      `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
      [org.id],
    );
    const fleet = await factories.fleet(org, { name: "terminal-cluster" });
    const keyResponse = await fetch(`${b.url}/api-key/v2/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ actorType: "application", actorTypeId: fleet.id, roles: ["provisioning-api-key"] }),
    });
    const provisioningKey = (await keyResponse.json()) as string;
    // The device's cloudlink socket is on B; the browser talks to A.
    simulator = await startSimulator({
      apiUrl: b.url,
      provisioningKey,
      fleetId: fleet.id,
      count: 1,
      intervalMs: 1000,
      disconnectChance: 0,
      http,
      log: () => {},
    });
    const device = simulator.devices[0];
    if (!device) throw new Error("no simulated device");
    await eventually(async () => b.ctx.devices.relay.isConnectedHere(device.deviceId), 20_000);
    expect(a.ctx.devices.relay.isConnectedHere(device.deviceId)).toBe(false);

    const terminal = await openTerminal(a.url, { token, uuid: device.uuid, target: "host" });
    expect(await terminal.outcome()).toBe("connected");
    terminal.type("echo hello\r");
    await terminal.read("echo hello\r\nhello\r\n");
    terminal.send({ event: "resize", cols: 100, rows: 30 });
    terminal.type("stty size\r");
    await terminal.read("30 100\r\n");

    // A stops with the session open: the session ends and is audited before its database closes.
    await a.app.close();
    // The server closes every websocket as it stops (no reason code): the dashboard reconnects.
    await terminal.closed;
    const rows = await audits(b.db, device.uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.details).toMatchObject({ target: "host", connected: true, end_reason: "server_shutdown" });
    // The device's shell was closed too.
    await eventually(() => device.runtime.terminals.size === 0);
  });
});
