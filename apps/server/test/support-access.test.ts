import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantGlobalRole } from "../src/features/users/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Support access (spec 2 §5 "Support access", §6; spec 1 §6.2): platform staff (support_agent,
 * balena_admin) see a fleet or device, and run its diagnostics, only while support access is
 * granted on it; the platform administrator removes fleet members (API-103).
 */
let t: TestApp;
let owner: BalenaSDK;
let fleet: { id: number; is_for__device_type: number };
let device: { id: number; uuid: string };
const staff: Record<"agent" | "admin", { sdk: BalenaSDK; token: string }> = {} as never;

async function signedIn(email: string, role?: string) {
  const made = await t.factories.user({ email, password: "support-password" });
  if (role) await grantGlobalRole(t.db.orm, made.user.id, role);
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email, password: "support-password" });
  return { sdk, token: (await sdk.auth.getToken()) as string, user: made.user };
}

const diagnostics = async (token: string) => {
  const response = await fetch(`${t.url}/v1/${device.uuid}/checks`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
};

beforeAll(async () => {
  t = await createTestApp();
  const me = await signedIn("owner@example.com");
  owner = me.sdk;
  const org = await t.factories.organization({ name: "Customer", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "customer-fleet" });
  device = await t.factories.device(fleet, { name: "customer-device" });
  staff.agent = await signedIn("agent@example.com", "support_agent");
  staff.admin = await signedIn("admin@example.com", "balena_admin");
});
afterAll(() => t?.close());

describe("support access", () => {
  it("lets platform staff see a fleet and its devices, and run diagnostics, only while granted", async () => {
    for (const { sdk, token } of Object.values(staff)) {
      await expect(sdk.models.application.get(fleet.id)).rejects.toThrow(/Application not found/);
      await expect(sdk.models.device.get(device.uuid)).rejects.toThrow(/Device not found/);
      expect(await diagnostics(token)).toMatchObject({ status: 404 });
    }

    await owner.models.application.grantSupportAccess(fleet.id, Date.now() + 24 * 3600_000);
    for (const { sdk, token } of Object.values(staff)) {
      expect(await sdk.models.application.get(fleet.id, { $select: ["app_name"] })).toMatchObject({
        app_name: "customer-fleet",
      });
      expect(await sdk.models.device.get(device.uuid, { $select: ["device_name"] })).toMatchObject({
        device_name: "customer-device",
      });
      // Past the permission checks: the device is offline, so the relay has nobody to ask.
      const answer = await diagnostics(token);
      expect(answer.status).not.toBe(404);
      expect(answer.status).not.toBe(403);
      // Seeing is not changing.
      await expect(sdk.models.device.rename(device.uuid, "taken-over")).rejects.toThrow(/Unauthorized/);
    }

    await owner.models.application.revokeSupportAccess(fleet.id);
    await owner.models.device.grantSupportAccess(device.uuid, Date.now() + 24 * 3600_000);
    for (const { sdk, token } of Object.values(staff)) {
      await expect(sdk.models.application.get(fleet.id)).rejects.toThrow(/Application not found/);
      expect(await sdk.models.device.get(device.uuid, { $select: ["device_name"] })).toMatchObject({
        device_name: "customer-device",
      });
      expect((await diagnostics(token)).status).not.toBe(404);
    }

    // Expired: nothing again.
    await t.db.query(
      `UPDATE device SET is_accessible_by_support_until__date = now() - interval '1 minute' WHERE id = $1`,
      [device.id],
    );
    for (const { sdk, token } of Object.values(staff)) {
      await expect(sdk.models.device.get(device.uuid)).rejects.toThrow(/Device not found/);
      expect(await diagnostics(token)).toMatchObject({ status: 404 });
    }
  });

  it("lets the platform administrator, not a support agent, remove a fleet member (API-103)", async () => {
    const member = await t.factories.user();
    await t.factories.fleetMember(member.user, fleet, "observer");
    const membership = async () =>
      (
        await t.db.query<{ id: number }>(
          `SELECT id FROM user_application_membership WHERE "user" = $1 AND is_member_of__application = $2`,
          [member.user.id, fleet.id],
        )
      ).rows[0]?.id;
    const id = Number(await membership());
    await staff.agent.sdk.pine.delete({ resource: "user_application_membership", id });
    expect(await membership()).toBe(id);
    await staff.admin.sdk.pine.delete({ resource: "user_application_membership", id });
    expect(await membership()).toBeUndefined();
  });
});
