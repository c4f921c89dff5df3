import { CLOUDLINK_ATTEMPT_HEADER } from "@flotilla/domain";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createTestApp, type TestApp } from "./harness.ts";
import { type AgentRequest, connectAgent, eventually } from "./support/agent.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Cloudlink and the supervisor relay (docs/device-protocol.md): a real websocket client plays the
 * agent; balena-sdk and plain requests call the relay routes; the permission matrix of spec 2 §6.
 */
let t: TestApp;
let ownerToken: string;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: TestDevice;
let offline: TestDevice;
const tokens: Record<string, string> = {};

const vpnState = async (id: number) => {
  const { rows } = await t.db.query<{ is_connected_to_vpn: boolean; last_vpn_event: Date | null }>(
    "SELECT is_connected_to_vpn, last_vpn_event FROM device WHERE id = $1",
    [id],
  );
  return rows[0];
};

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  ownerToken = owner.token;
  tokens.administrator = owner.token;
  const member = await t.factories.user();
  tokens.member = member.token;
  const org = await t.factories.organization({ name: "Links", admins: [owner.user], members: [member.user] });
  fleet = await t.factories.fleet(org, { name: "link-fleet" });
  for (const role of ["observer", "safe-operator", "operator", "safe-developer", "developer"]) {
    const user = await t.factories.user();
    await t.factories.fleetMember(user.user, fleet, role);
    tokens[role] = user.token;
  }
  tokens.stranger = (await t.factories.user()).token;
  const key = await provisioningKeyFor(t, ownerToken, fleet.id);
  device = await registerDevice(t, key, fleet);
  offline = await registerDevice(t, key, fleet);
});
afterAll(() => t.close());

describe("GET /cloudlink/v1/connect", () => {
  it("refuses a connection without a device key", async () => {
    const socket = new WebSocket(`${t.url.replace(/^http/, "ws")}/cloudlink/v1/connect`);
    socket.on("error", () => undefined);
    const status = await new Promise<number>((resolve) => {
      socket.once("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
      socket.once("open", () => resolve(101));
    });
    expect(status).toBe(401);
    socket.terminate();
    const userSocket = new WebSocket(`${t.url.replace(/^http/, "ws")}/cloudlink/v1/connect`, {
      headers: { authorization: `Bearer ${ownerToken}` },
    });
    const code = await new Promise<number>((resolve) => userSocket.once("close", (c) => resolve(c)));
    expect(code).toBe(4001);
  });

  it("relays a blink to the agent and answers with its reply", async () => {
    const agent = await connectAgent(t.url, device.key);
    await eventually(async () => (await vpnState(device.id))?.is_connected_to_vpn === true);
    const answer = await call(t, "POST", "/supervisor/v1/blink", ownerToken, { uuid: device.uuid });
    expect(answer).toMatchObject({ status: 200, json: { Data: "OK", Error: null } });
    expect(agent.received).toEqual([{ type: "request", id: expect.any(String), action: "blink", data: {} }]);
    await agent.close();
    await eventually(async () => (await vpnState(device.id))?.is_connected_to_vpn === false);
    expect((await vpnState(device.id))?.last_vpn_event).not.toBeNull();
  });

  it("keeps one socket per device: a newer one replaces the older", async () => {
    const first = await connectAgent(t.url, device.key);
    const second = await connectAgent(t.url, device.key);
    expect((await first.closed).code).toBe(4000);
    const answer = await call(t, "POST", "/supervisor/v1/restart", ownerToken, {
      deviceId: device.id,
      appId: fleet.id,
      data: { appId: fleet.id },
    });
    expect(answer.status).toBe(200);
    expect(first.received).toEqual([]);
    expect(second.received.map((r) => r.action)).toEqual(["restart"]);
    // The replaced socket's close leaves the device connected (socket changes are written in
    // batches of 50 ms: wait for them, then for a batch more).
    await eventually(async () => (await vpnState(device.id))?.is_connected_to_vpn === true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await vpnState(device.id))?.is_connected_to_vpn).toBe(true);
    await second.close();
  });

  it("refuses an earlier connect of the agent that arrives after a later one (a handshake it gave up on)", async () => {
    const attempt = (value: string) => ({ [CLOUDLINK_ATTEMPT_HEADER]: value });
    const live = await connectAgent(t.url, device.key, undefined, attempt("a1b2.2"));
    const stale = await connectAgent(t.url, device.key, undefined, attempt("a1b2.1"));
    expect((await stale.closed).code).toBe(4000);
    const blink = await call(t, "POST", "/supervisor/v1/blink", ownerToken, { uuid: device.uuid });
    expect(blink.status).toBe(200);
    expect(live.received.map((r) => r.action)).toEqual(["blink"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await vpnState(device.id))?.is_connected_to_vpn).toBe(true);
    // The agent restarted (another run): its first connect is the newer one.
    const restarted = await connectAgent(t.url, device.key, undefined, attempt("c3d4.1"));
    expect((await live.closed).code).toBe(4000);
    await restarted.close();
  });

  it("passes the agent's refusal of a blink on with its keyed error", async () => {
    const agent = await connectAgent(t.url, device.key, () => ({
      status: 400,
      body: { Error: "blink not supported" },
    }));
    const answer = await call(t, "POST", "/supervisor/v1/blink", ownerToken, { uuid: device.uuid });
    expect(answer).toMatchObject({
      status: 400,
      code: "device_does_not_support_blinking",
      json: { Error: "blink not supported" },
    });
    await agent.close();
  });

  it("answers 400 device_must_be_online for a device without a socket", async () => {
    const answer = await call(t, "POST", "/supervisor/v1/blink", ownerToken, { uuid: offline.uuid });
    expect(answer).toMatchObject({ status: 400, code: "device_must_be_online" });
  });
});

describe("supervisor relay for balena-sdk", () => {
  let sdk: BalenaSDK;
  let agent: Awaited<ReturnType<typeof connectAgent>>;
  const locked = (request: AgentRequest) =>
    (request.action === "reboot" || request.action === "shutdown") && request.data.force !== true;

  beforeAll(async () => {
    sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
    await sdk.auth.loginWithToken(ownerToken);
    agent = await connectAgent(t.url, device.key, (request) => {
      if (locked(request)) return { status: 423, body: { Error: "Updates are locked", Data: null } };
      if (request.action === "device") {
        return { status: 200, body: { api_port: 48484, status: "Idle", commit: null, update_pending: false } };
      }
      return { status: 200, body: { Data: "OK", Error: null } };
    });
  });
  afterAll(() => agent.close());

  it("identifies, restarts and reads the supervisor state", async () => {
    await sdk.models.device.identify(device.uuid);
    await sdk.models.device.restartApplication(device.uuid);
    const state = await sdk.models.device.getSupervisorState(device.uuid);
    expect(state).toMatchObject({ api_port: 48484, status: "Idle" });
    expect(agent.received.slice(-3).map((r) => r.action)).toEqual(["blink", "restart", "device"]);
  });

  it("passes the agent's 423 through (BalenaSupervisorLockedError), and force on retry", async () => {
    await expect(sdk.models.device.reboot(device.uuid)).rejects.toMatchObject({ code: "BalenaSupervisorLockedError" });
    const raw = await call(t, "POST", "/supervisor/v1/shutdown", ownerToken, {
      deviceId: device.id,
      appId: fleet.id,
      data: { force: false },
    });
    expect(raw).toMatchObject({ status: 423, code: "supervisor_locked", json: { Error: "Updates are locked" } });
    await sdk.models.device.reboot(device.uuid, { force: true });
    expect(agent.received.at(-1)).toMatchObject({ action: "reboot", data: { force: true } });
  });

  it("relays service actions with the image id", async () => {
    const answer = await call(t, "POST", `/supervisor/v2/applications/${fleet.id}/restart-service`, ownerToken, {
      deviceId: device.id,
      appId: fleet.id,
      data: { appId: fleet.id, imageId: 77 },
    });
    expect(answer.status).toBe(200);
    expect(agent.received.at(-1)).toMatchObject({ action: "restart-service", data: { imageId: 77 } });
  });

  /** user-actions.ts: a supervisor older than 7 is asked to update first; reads still pass. */
  it("refuses user actions on a device whose supervisor is older than 7 with updateRequired", async () => {
    const old = await registerDevice(t, await provisioningKeyFor(t, ownerToken, fleet.id), fleet, {
      supervisor_version: "6.6.11",
    });
    const oldAgent = await connectAgent(t.url, old.key, () => ({ status: 200, body: { Data: "OK", Error: null } }));
    try {
      await eventually(async () => (await vpnState(old.id))?.is_connected_to_vpn === true);
      // balena-request hands the dashboard the body's `error` as the error's body.
      await expect(sdk.models.device.reboot(old.uuid)).rejects.toMatchObject({
        statusCode: 400,
        body: "updateRequired",
      });
      const raw = await call(t, "POST", `/supervisor/v2/applications/${fleet.id}/stop-service`, ownerToken, {
        uuid: old.uuid,
        data: { imageId: 1 },
      });
      expect(raw).toMatchObject({
        status: 400,
        code: "device_update_required",
        json: { error: "updateRequired" },
      });
      expect(oldAgent.received).toEqual([]);
      expect((await call(t, "POST", "/supervisor/v1/device", ownerToken, { uuid: old.uuid })).status).toBe(200);
    } finally {
      await oldAgent.close();
    }
  });

  /** Spec 2 §6: supervisor-proxy-write from operator up (safe-developer included); observers read only. */
  it("checks each action per role", async () => {
    const writes = [
      ["/supervisor/v1/blink", { uuid: device.uuid }],
      ["/supervisor/v1/restart", { deviceId: device.id, appId: fleet.id, data: { appId: fleet.id } }],
      ["/supervisor/v1/reboot", { deviceId: device.id, data: { force: true } }],
      ["/supervisor/v1/shutdown", { deviceId: device.id, appId: fleet.id, data: { force: true } }],
      ["/supervisor/v1/purge", { deviceId: device.id, appId: fleet.id, data: { appId: fleet.id } }],
      ["/supervisor/v1/update", { deviceId: device.id, appId: fleet.id, data: { force: false } }],
      [`/supervisor/v2/applications/${fleet.id}/start-service`, { deviceId: device.id, data: { imageId: 1 } }],
      [`/supervisor/v2/applications/${fleet.id}/stop-service`, { deviceId: device.id, data: { imageId: 1 } }],
      [`/supervisor/v2/applications/${fleet.id}/restart-service`, { deviceId: device.id, data: { imageId: 1 } }],
    ] as const;
    const expected: Record<string, number> = {
      stranger: 404,
      member: 404,
      observer: 403,
      "safe-operator": 403,
      operator: 200,
      "safe-developer": 200,
      developer: 200,
      administrator: 200,
    };
    const seen: Record<string, number[]> = {};
    for (const [role, token] of Object.entries(tokens)) {
      for (const [path, body] of writes) {
        const answer = await call(t, "POST", path, token, body);
        seen[role] = [...(seen[role] ?? []), answer.status];
      }
    }
    for (const [role, status] of Object.entries(expected)) {
      expect(seen[role], role).toEqual(writes.map(() => status));
    }
    // A refusal names the right that is missing (spec 1 §6.2, API-088), as the data API's do.
    const refused = await call(t, "POST", "/supervisor/v1/blink", tokens.observer, { uuid: device.uuid });
    expect(refused.text).toContain(
      "You are not allowed to do this: user lacks the permission device.supervisor-proxy-write.",
    );
    // Reading the supervisor state is a read: observers may, strangers see no device.
    expect((await call(t, "POST", "/supervisor/v1/device", tokens.observer, { uuid: device.uuid })).status).toBe(200);
    expect((await call(t, "POST", "/supervisor/v1/device", tokens.stranger, { uuid: device.uuid })).status).toBe(404);
    // A device's own key is no user.
    expect((await call(t, "POST", "/supervisor/v1/blink", device.key, { uuid: device.uuid })).status).toBe(404);
    expect((await call(t, "POST", "/supervisor/v1/blink", ownerToken, {})).status).toBe(400);
    expect((await call(t, "POST", "/supervisor/v1/reboot", ownerToken, { deviceId: 2 ** 40 })).status).toBe(400);
    // Ids may be strings of digits (balena-sdk sends both, test/fleet-actions.test.ts), nothing else.
    expect((await call(t, "POST", "/supervisor/v1/reboot", ownerToken, { deviceId: "one" })).status).toBe(400);
    expect((await call(t, "POST", "/supervisor/v1/reboot", ownerToken, { deviceId: 999_999 })).status).toBe(404);
  });
});

describe("POST /device/v2/{uuid}/log-stream", () => {
  it("keeps the last lines per device, cuts long lines and skips bad ones", async () => {
    const lines = [
      JSON.stringify({ message: "hello", timestamp: 1_700_000_000_000, serviceId: 3 }),
      "not json",
      JSON.stringify({ message: "x".repeat(12_000), timestamp: 1_700_000_000_001, isStdErr: true }),
      JSON.stringify({ message: "Dropped 4 log lines", timestamp: 1_700_000_000_002, isSystem: true }),
    ];
    const response = await fetch(`${t.url}/device/v2/${device.uuid}/log-stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${device.key}`, "content-type": "application/x-ndjson" },
      body: `${lines.join("\n")}\n`,
    });
    expect(response.status).toBe(201);
    const kept = await t.ctx.devices.logs.history(device.id, 1000);
    expect(kept.map((l) => [l.message.length, l.isSystem, l.isStdErr, l.serviceId])).toEqual([
      [5, false, false, 3],
      [10_000, false, true, null],
      [19, true, false, null],
    ]);
  });

  it("reads gzip and refuses other devices' streams", async () => {
    const { gzipSync } = await import("node:zlib");
    const body = gzipSync(`${JSON.stringify({ message: "zipped", timestamp: 1 })}\n`);
    const response = await fetch(`${t.url}/device/v2/${device.uuid}/log-stream`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${device.key}`,
        "content-type": "application/x-ndjson",
        "content-encoding": "gzip",
      },
      body,
    });
    expect(response.status).toBe(201);
    expect((await t.ctx.devices.logs.history(device.id, 1))[0]?.message).toBe("zipped");
    const other = await fetch(`${t.url}/device/v2/${offline.uuid}/log-stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${device.key}`, "content-type": "application/x-ndjson" },
      body: "{}\n",
    });
    expect(other.status).toBe(401);
  });
});

describe("GET /device/v2/{uuid}/logs", () => {
  it("answers the device's recent lines to those who may read it, and nothing to others", async () => {
    await fetch(`${t.url}/device/v2/${device.uuid}/log-stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${device.key}`, "content-type": "application/x-ndjson" },
      body: `${JSON.stringify({ message: "Applied environment variable GREETING to main", timestamp: 2 })}\n`,
    });
    const read = await call(t, "GET", `/device/v2/${device.uuid}/logs?count=1`, tokens.observer);
    expect(read.status).toBe(200);
    expect(read.json).toEqual([
      expect.objectContaining({ message: "Applied environment variable GREETING to main", timestamp: 2 }),
    ]);
    const stranger = await t.factories.user();
    expect((await call(t, "GET", `/device/v2/${device.uuid}/logs`, stranger.token)).status).toBe(404);
    expect((await call(t, "GET", `/device/v2/${device.uuid}/logs?count=many`, ownerToken)).status).toBe(400);
  });
});
