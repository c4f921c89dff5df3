import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { type AgentRequest, connectAgent, eventually } from "./support/agent.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Fleet-wide supervisor actions as balena-sdk sends them (issue #22): `application.restart`
 * (`POST /application/{id}/restart`, no body), `application.purge/reboot/shutdown` (`/supervisor/v1/*`
 * with `{appId, data}` and no device), and ids as numbers or strings in every relay body.
 */
let t: TestApp;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
const devices: TestDevice[] = [];
const agents: Awaited<ReturnType<typeof connectAgent>>[] = [];
const tokens: Record<string, string> = {};
let locked = false;

const sdkAs = async (token: string) => {
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(token);
  return sdk;
};
const requestsFor = (agent: number, action: string): AgentRequest[] =>
  agents[agent]?.received.filter((r) => r.action === action) ?? [];

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  tokens.owner = owner.token;
  const org = await t.factories.organization({ name: "Fleetwide", admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "wide" });
  const observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, fleet, "observer");
  tokens.observer = observer.token;
  tokens.stranger = (await t.factories.user()).token;
  const key = await provisioningKeyFor(t, owner.token, fleet.id);
  for (let i = 0; i < 3; i++) devices.push(await registerDevice(t, key, fleet, { supervisor_version: "17.0.0" }));
  // Two devices on cloudlink; the second answers 423 while `locked` (an update lock).
  for (const [index, device] of devices.slice(0, 2).entries()) {
    agents.push(
      await connectAgent(t.url, device.key, () =>
        index === 1 && locked ? { status: 423, body: { Error: "Updates are locked" } } : { status: 200, body: "OK" },
      ),
    );
  }
  await eventually(async () => {
    const { rows } = await t.db.query(
      `SELECT 1 FROM "device" WHERE belongs_to__application = $1 AND is_connected_to_vpn`,
      [fleet.id],
    );
    return rows.length === 2;
  });
});
afterAll(async () => {
  for (const agent of agents) await agent.close();
  await t.close();
});

describe("fleet-wide actions", () => {
  let sdk: BalenaSDK;
  beforeAll(async () => {
    sdk = await sdkAs(tokens.owner ?? "");
  });

  it("restarts every connected device of the fleet with balena-sdk's application.restart", async () => {
    await sdk.models.application.restart(fleet.id);
    for (const agent of [0, 1]) expect(requestsFor(agent, "restart").at(-1)?.data).toEqual({ appId: fleet.id });
    // By slug too (the SDK looks the id up first), as `balena fleet restart org/fleet` does.
    await sdk.models.application.restart(fleet.slug);
    expect(requestsFor(0, "restart")).toHaveLength(2);
  });

  it("purges, reboots and shuts down a whole fleet with the SDK's {appId, data: {appId: string}} bodies", async () => {
    await sdk.models.application.purge(fleet.id);
    for (const agent of [0, 1]) expect(requestsFor(agent, "purge").at(-1)?.data).toEqual({ appId: fleet.id });
    await sdk.models.application.reboot(fleet.id, { force: true });
    expect(requestsFor(1, "reboot").at(-1)?.data).toEqual({ appId: fleet.id, force: true });
    await sdk.models.application.shutdown(fleet.id);
    expect(requestsFor(0, "shutdown").at(-1)?.data).toEqual({ appId: fleet.id, force: false });
  });

  it("says an update lock is set when a device answers 423, naming the devices that did not act", async () => {
    locked = true;
    try {
      await expect(sdk.models.application.restart(fleet.id)).rejects.toMatchObject({
        code: "BalenaSupervisorLockedError",
      });
      const raw = await call(t, "POST", "/supervisor/v1/purge", tokens.owner, { appId: fleet.id });
      expect(raw.status).toBe(423);
      expect(raw.json).toEqual({
        // `message` is what balena's clients print.
        message: "1 of 2 devices did not purge: an update lock is set",
        error: "1 of 2 devices did not purge: an update lock is set",
        devices: [devices[1]?.uuid],
      });
    } finally {
      locked = false;
    }
  });

  it("refuses those who may not act on the fleet, and fleets they cannot see", async () => {
    const observer = await call(t, "POST", `/application/${fleet.id}/restart`, tokens.observer);
    expect(observer.status).toBe(403);
    const stranger = await call(t, "POST", `/application/${fleet.id}/restart`, tokens.stranger);
    expect(stranger.status).toBe(404);
    expect(stranger.text).toContain(`Fleet not found: ${fleet.id}`);
    expect((await call(t, "POST", "/application/999999/restart", tokens.owner)).status).toBe(404);
    const bad = await call(t, "POST", "/application/abc/restart", tokens.owner);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("id: must be an id");
  });
});

describe("ids in relay bodies", () => {
  it("takes deviceId and appId as strings or numbers", async () => {
    const before = requestsFor(0, "purge").length;
    const otherBefore = requestsFor(1, "purge").length;
    const asStrings = await call(t, "POST", "/supervisor/v1/purge", tokens.owner, {
      deviceId: String(devices[0]?.id),
      appId: String(fleet.id),
      data: { appId: String(fleet.id) },
    });
    expect(asStrings.status).toBe(200);
    const asNumbers = await call(t, "POST", "/supervisor/v1/purge", tokens.owner, {
      deviceId: devices[0]?.id,
      appId: fleet.id,
      data: { appId: fleet.id },
    });
    expect(asNumbers.status).toBe(200);
    expect(
      requestsFor(0, "purge")
        .slice(before)
        .map((r) => r.data),
    ).toEqual([{ appId: fleet.id }, { appId: fleet.id }]);
    // A device named is the only one reached, even with the fleet's appId beside it.
    expect(requestsFor(1, "purge").length).toBe(otherBefore);
  });

  it("names the field of an id that is neither", async () => {
    for (const body of [
      { deviceId: "12a" },
      { deviceId: -1 },
      { appId: "x" },
      { deviceId: 1, data: { appId: true } },
    ]) {
      const answer = await call(t, "POST", "/supervisor/v1/purge", tokens.owner, body);
      expect(answer.status).toBe(400);
      expect(answer.text).toMatch(/(deviceId|appId|data\.appId): must be an id/);
    }
    const none = await call(t, "POST", "/supervisor/v1/blink", tokens.owner, { appId: fleet.id });
    expect(none.status).toBe(400);
    expect(none.text).toContain("uuid or deviceId is required");
  });
});
