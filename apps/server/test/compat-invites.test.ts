import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Inviting someone who already is a member (issue compat-3): balena's API creates the invitation
 * (balena-sdk's own tests invite a member of the organization), so Flotilla's does too; the
 * dashboard's invite form refuses first in the spec's words (invitee_already_exist, spec 3 §5).
 */
let t: TestApp;
let sdk: BalenaSDK;
let org: Awaited<ReturnType<TestApp["factories"]["organization"]>>;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let member: Awaited<ReturnType<TestApp["factories"]["user"]>>;
let admin: Awaited<ReturnType<TestApp["factories"]["user"]>>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.factories.user();
  member = await t.factories.user();
  org = await t.factories.organization({ name: "Inviters", admins: [admin.user], members: [member.user] });
  fleet = await t.factories.fleet(org, { name: "invited-fleet" });
  await t.factories.fleetMember(member.user, fleet, "developer");
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(admin.token);
});
afterAll(() => t.close());

describe("inviting a member again", () => {
  it("organization.invite.create invites a member of the organization, with the role asked", async () => {
    const invite = await sdk.models.organization.invite.create(org.id, {
      invitee: member.user.email ?? "",
      roleName: "administrator",
    });
    expect(invite).toHaveProperty("id");
    const [row] = await sdk.models.organization.invite.getAllByOrganization(org.id, {
      $select: ["id"],
      $expand: { invitee: { $select: ["email"] }, organization_membership_role: { $select: ["name"] } },
    });
    expect(row).toMatchObject({
      invitee: [{ email: member.user.email }],
      organization_membership_role: [{ name: "administrator" }],
    });
    // A second invitation of the same address is still refused (one pending invitation each).
    await expect(sdk.models.organization.invite.create(org.id, { invitee: member.user.email ?? "" })).rejects.toThrow(
      "This user has already been invited",
    );
    await sdk.models.organization.invite.revoke(invite.id);
  });

  it("application.invite.create invites a member of the fleet and an administrator of its organization", async () => {
    const again = await sdk.models.application.invite.create(fleet.id, { invitee: member.user.email ?? "" });
    expect(again).toHaveProperty("id");
    const administrator = await sdk.models.application.invite.create(fleet.id, { invitee: admin.user.email ?? "" });
    expect(administrator).toHaveProperty("id");
    const invites = await sdk.models.application.invite.getAllByApplication(fleet.id, {
      $select: ["id"],
      $expand: { invitee: { $select: ["email"] } },
    });
    expect(invites.map((row) => row.invitee[0]?.email).sort()).toEqual([admin.user.email, member.user.email].sort());
  });

  it("answers the dashboard's own check of a member by email (case-insensitive, in a $count)", async () => {
    const byEmail = (email: string) => ({
      user: { $any: { $alias: "u", $expr: { $eq: [{ $tolower: { $: ["u", "email"] } }, email.toLowerCase()] } } },
    });
    const count = (email: string) =>
      sdk.pine.get({
        resource: "organization_membership",
        options: { $count: { $filter: { is_member_of__organization: org.id, ...byEmail(email) } } },
      } as never) as Promise<unknown>;
    expect(await count((member.user.email ?? "").toUpperCase())).toBe(1);
    expect(await count("nobody@example.com")).toBe(0);
  });
});
