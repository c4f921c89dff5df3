import fs from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { seedDemo } from "../src/features/demo/seed.ts";
import { grantGlobalRole } from "../src/features/users/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf, client } from "./support/accounts.ts";
import { linkIn, type MailServer, startMailServer } from "./support/mail.ts";

let t: TestApp;
let mail: MailServer;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ SMTP_URL: mail.url, FLOTILLA_PUBLIC_URL: "http://dashboard.test" });
  api = client(t);
});
afterAll(async () => {
  await t.close();
  await mail.close();
});

/** A taken name in balena's words ("unique", which its clients look for); the dashboard shows the spec's (fleets.test.ts). */
const NAME_TAKEN = (type: "organization" | "team") =>
  type === "organization" ? '"name" must be unique.' : '"belongs_to__organization" and "name" must be unique.';
const LAST_ADMIN = "The last administrator of an organization cannot be removed, demoted or leave it";

async function subscribe(organizationId: number, planCode: string) {
  await t.db.query(
    `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code = $2`,
    [organizationId, planCode],
  );
}
const roleId = async (table: "organization_membership_role" | "application_membership_role", name: string) => {
  const { rows } = await t.db.query<{ id: number }>(`SELECT id FROM "${table}" WHERE name = $1`, [name]);
  return Number(rows[0]?.id);
};
const membershipOf = async (userId: number, orgId: number) => {
  const { rows } = await t.db.query<{ id: number; role: string }>(
    `SELECT m.id, r.name AS role FROM organization_membership m JOIN organization_membership_role r ON r.id = m.organization_membership_role
      WHERE m."user" = $1 AND m.is_member_of__organization = $2`,
    [userId, orgId],
  );
  return rows[0];
};

describe("organizations", () => {
  it("are created only by administrators (of some organization) and platform administrators (spec 1 §6.2)", async () => {
    const member = await t.factories.user();
    const org = await t.factories.organization({ members: [member.user] });
    const refused = await api.post("/v7/organization", { name: "Mine" }, member.token);
    expect([refused.status, refused.text]).toEqual([
      403,
      "Only an administrator of an organization or a platform administrator can create an organization",
    ]);
    const { rows } = await t.db.query("SELECT 1 FROM organization WHERE name = 'Mine'");
    expect(rows).toHaveLength(0);
    // Other roles only read it: no rename, no delete.
    await api.patch(`/v7/organization(${org.id})`, { name: "Taken over" }, member.token);
    expect((await api.del(`/v7/organization(${org.id})`, member.token)).status).not.toBe(200);
    const after = await t.db.query<{ name: string }>("SELECT name FROM organization WHERE id = $1", [org.id]);
    expect(after.rows[0]?.name).toBe(org.name);
    // A platform administrator without any organization may.
    const staff = await t.factories.user();
    await grantGlobalRole(t.db.orm, staff.user.id, "balena_admin");
    expect((await api.post("/v7/organization", { name: "Staff org" }, staff.token)).status).toBe(201);
    // Once an administrator somewhere, the member may too.
    await t.factories.organization({ admins: [member.user] });
    expect((await api.post("/v7/organization", { name: "Mine" }, member.token)).status).toBe(201);
  });

  it("need a name, unique case-insensitively among the user's organizations; the creator administers it", async () => {
    const { user, token } = await t.factories.user();
    await t.factories.organization({ admins: [user] });
    expect((await api.post("/v7/organization", { name: "   " }, token)).text).toBe("A name is required");
    expect((await api.post("/v7/organization", {}, token)).text).toBe("A name is required");
    const created = await api.post("/v7/organization", { name: "  Acme  " }, token);
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: "Acme", logo_image: null });
    expect((await membershipOf(user.id, Number(created.json.id)))?.role).toBe("administrator");
    const again = await api.post("/v7/organization", { name: "ACME" }, token);
    expect(again.status).toBe(409);
    expect(again.text).toBe(NAME_TAKEN("organization"));
    // Another user's organizations do not count.
    const other = await t.factories.user();
    await t.factories.organization({ admins: [other.user] });
    expect((await api.post("/v7/organization", { name: "acme" }, other.token)).status).toBe(201);
  });

  it("are renamed by administrators, with the same name rules", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    await t.factories.organization({ name: `Taken ${org.id}`, admins: [admin.user] });
    expect((await api.patch(`/v7/organization(${org.id})`, { name: "" }, admin.token)).text).toBe("A name is required");
    const taken = await api.patch(`/v7/organization(${org.id})`, { name: `taken ${org.id}` }, admin.token);
    expect([taken.status, taken.text]).toEqual([409, NAME_TAKEN("organization")]);
    expect((await api.patch(`/v7/organization(${org.id})`, { name: "Renamed" }, admin.token)).status).toBe(200);
    // Members cannot: the row is not theirs to update (nothing changes).
    await api.patch(`/v7/organization(${org.id})`, { name: "By member" }, member.token);
    const { rows } = await t.db.query<{ name: string }>("SELECT name FROM organization WHERE id = $1", [org.id]);
    expect(rows[0]?.name).toBe("Renamed");
  });

  it("are deleted only by a sole administrator; other members leave", async () => {
    const a = await t.factories.user();
    const b = await t.factories.user();
    const org = await t.factories.organization({ admins: [a.user, b.user] });
    const refused = await api.del(`/v7/organization(${org.id})`, a.token);
    expect(refused.status).toBe(403);
    expect(refused.text).toBe("Only the sole administrator of an organization can delete it; other members leave it");
    // b leaves (deletes its own membership); a is now the sole administrator and deletes it.
    const bMembership = await membershipOf(b.user.id, org.id);
    expect((await api.del(`/v7/organization_membership(${bMembership?.id})`, b.token)).status).toBe(200);
    expect((await api.del(`/v7/organization(${org.id})`, a.token)).status).toBe(200);
    const { rows } = await t.db.query("SELECT 1 FROM organization WHERE id = $1", [org.id]);
    expect(rows).toHaveLength(0);
  });
});

describe("organization members", () => {
  it("the last administrator can neither leave, be demoted nor be removed (cannot_delete_last_organization_admin)", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const adminMembership = await membershipOf(admin.user.id, org.id);
    const leave = await api.del(`/v7/organization_membership(${adminMembership?.id})`, admin.token);
    expect([leave.status, leave.text]).toEqual([400, LAST_ADMIN]);
    // Under /v7 the body is the text alone; the code comes in a header (exposed to the dashboard).
    expect(leave.headers.get("x-flotilla-error-code")).toBe("cannot_delete_last_organization_admin");
    const memberRole = await roleId("organization_membership_role", "member");
    const demote = await api.patch(
      `/v7/organization_membership(${adminMembership?.id})`,
      { organization_membership_role: memberRole },
      admin.token,
    );
    expect([demote.status, demote.text]).toEqual([400, LAST_ADMIN]);
    expect((await membershipOf(admin.user.id, org.id))?.role).toBe("administrator");
    // By filter too (the SDK's batch form).
    const byFilter = await api.del(
      `/v7/organization_membership?$filter=is_member_of__organization eq ${org.id}`,
      admin.token,
    );
    expect(byFilter.status).toBe(400);
    expect(await membershipOf(member.user.id, org.id)).toBeDefined();
  });

  it("administrators promote, demote and remove members; members only leave", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const other = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user, other.user] });
    const memberMembership = await membershipOf(member.user.id, org.id);
    const otherMembership = await membershipOf(other.user.id, org.id);
    const adminRole = await roleId("organization_membership_role", "administrator");
    // A member cannot change roles or remove others.
    await api.patch(
      `/v7/organization_membership(${otherMembership?.id})`,
      { organization_membership_role: adminRole },
      member.token,
    );
    expect((await membershipOf(other.user.id, org.id))?.role).toBe("member");
    await api.del(`/v7/organization_membership(${otherMembership?.id})`, member.token);
    expect(await membershipOf(other.user.id, org.id)).toBeDefined();
    // The administrator promotes; now the first administrator may leave.
    const promote = await api.patch(
      `/v7/organization_membership(${memberMembership?.id})`,
      { organization_membership_role: adminRole },
      admin.token,
    );
    expect(promote.status).toBe(200);
    expect((await membershipOf(member.user.id, org.id))?.role).toBe("administrator");
    const moved = await api.patch(
      `/v7/organization_membership(${memberMembership?.id})`,
      { user: admin.user.id },
      admin.token,
    );
    expect(moved.status).toBe(400);
    expect((await api.del(`/v7/organization_membership(${otherMembership?.id})`, admin.token)).status).toBe(200);
    const adminMembership = await membershipOf(admin.user.id, org.id);
    expect((await api.del(`/v7/organization_membership(${adminMembership?.id})`, admin.token)).status).toBe(200);
    expect(await membershipOf(admin.user.id, org.id)).toBeUndefined();
  });

  it("leaving also ends the team and fleet memberships of that organization", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const fleet = await t.factories.fleet(org);
    await t.factories.fleetMember(member.user, fleet, "developer");
    await t.factories.team(org, { members: [member.user] });
    const membership = await membershipOf(member.user.id, org.id);
    expect((await api.del(`/v7/organization_membership(${membership?.id})`, member.token)).status).toBe(200);
    const teams = await t.db.query('SELECT 1 FROM team_membership WHERE "user" = $1', [member.user.id]);
    const fleets = await t.db.query('SELECT 1 FROM user_application_membership WHERE "user" = $1', [member.user.id]);
    expect([teams.rows.length, fleets.rows.length]).toEqual([0, 0]);
  });

  it("members read the member list with usernames and emails, paged with a count; outsiders see nothing", async () => {
    const admin = await t.factories.user();
    const members = await Promise.all([1, 2, 3].map(() => t.factories.user()));
    const org = await t.factories.organization({ admins: [admin.user], members: members.map((m) => m.user) });
    const outsider = await t.factories.user();
    const query = `/v7/organization_membership?$filter=is_member_of__organization eq ${org.id}&$select=id&$expand=user($select=id,username,email),organization_membership_role($select=name)&$orderby=id asc&$top=2&$skip=1`;
    const page = await api.get(query, members[0]?.token);
    expect(page.status).toBe(200);
    const rows = page.json.d as { user: { username: string; email: string }[] }[];
    expect(rows).toHaveLength(2);
    expect(rows[0]?.user[0]?.username).toBe(members[0]?.user.username);
    expect(rows[0]?.user[0]?.email).toBe(members[0]?.user.email);
    const count = await api.get(
      `/v7/organization_membership/$count?$filter=is_member_of__organization eq ${org.id}`,
      members[1]?.token,
    );
    expect(count.json.d).toBe(4);
    expect((await api.get(query, outsider.token)).json.d).toEqual([]);
  });
});

describe("fleet member lists", () => {
  it("expand each member's user (username, seat role, SAML account, profile email) and role (spec 2 §3)", async () => {
    const admin = await t.factories.user();
    const dev = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [dev.user] });
    const fleet = await t.factories.fleet(org);
    await t.factories.fleetMember(dev.user, fleet, "developer");
    const query =
      `/v7/user_application_membership?$filter=is_member_of__application eq ${fleet.id}&$select=id` +
      `&$expand=user($select=id,username;$expand=organization_membership($select=effective_seat_role;$filter=is_member_of__organization eq ${org.id}),` +
      "owns__saml_account($select=id),user_profile($select=email)),application_membership_role($select=id,name)";
    // The administrator reads another member's profile email, seat role and SAML accounts.
    const read = await api.get(query, admin.token);
    expect(read.status).toBe(200);
    expect(read.json.d).toEqual([
      {
        id: expect.any(Number),
        user: [
          {
            id: dev.user.id,
            username: dev.user.username,
            organization_membership: [{ effective_seat_role: "developer" }],
            owns__saml_account: [],
            user_profile: [{ email: dev.user.email }],
          },
        ],
        application_membership_role: [{ id: expect.any(Number), name: "developer" }],
      },
    ]);
    // An outsider reads nothing.
    const outsider = await t.factories.user();
    expect((await api.get(query, outsider.token)).json.d).toEqual([]);
  });
});

describe("organization invitations", () => {
  it("refuse a missing, invalid or already invited invitee (spec 3 §5 keys); a member is invited again, as on balena", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user({ email: `Member-${Date.now()}@Example.com` });
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const invite = (body: Record<string, unknown>, token = admin.token) =>
      api.post("/v7/invitee__is_invited_to__organization", { is_invited_to__organization: org.id, ...body }, token);
    expect((await invite({ invitee: "  " })).text).toBe("An invitee is required");
    expect((await invite({})).text).toBe("An invitee is required");
    const invalid = await invite({ invitee: "not-an-email" });
    expect([invalid.status, invalid.text]).toEqual([400, "Invalid email address"]);
    // balena's API invites a member again (the dashboard's form refuses with invitee_already_exist).
    const existing = await invite({ invitee: ` ${member.user.email?.toUpperCase()} ` });
    expect(existing.status).toBe(201);
    const first = await invite({ invitee: "  new.person@example.com " });
    expect(first.status).toBe(201);
    const again = await invite({ invitee: "NEW.PERSON@example.com" });
    expect([again.status, again.text]).toEqual([409, "This user has already been invited"]);
    // Members may not invite.
    expect((await invite({ invitee: "x@example.com" }, member.token)).status).toBe(401);
    // Only a hash of the token is kept; it expires in 7 days.
    const { rows } = await t.db.query<{ token_hash: string; expires_at: Date }>(
      "SELECT token_hash, expires_at FROM organization_invite WHERE id = $1",
      [first.json.id],
    );
    const link = linkIn(await mail.next("new.person@example.com"));
    const token = link.split("/").pop() ?? "";
    expect(rows[0]?.token_hash).not.toContain(token);
    const days = (new Date(rows[0]?.expires_at ?? 0).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
  });

  it("mail a link that an existing user accepts with the invited role; the invitation is gone", async () => {
    const admin = await t.factories.user();
    const invitee = await t.factories.user();
    const org = await t.factories.organization({ name: `Invite Org ${Date.now()}`, admins: [admin.user] });
    const adminRole = await roleId("organization_membership_role", "administrator");
    const created = await api.post(
      "/v7/invitee__is_invited_to__organization",
      {
        invitee: invitee.user.email,
        is_invited_to__organization: org.id,
        organization_membership_role: adminRole,
        message: "Welcome aboard",
      },
      admin.token,
    );
    expect(created.status).toBe(201);
    const received = await mail.next(invitee.user.email ?? "");
    expect(received.subject).toBe(`You are invited to the organization ${org.name}`);
    expect(received.text).toContain("Welcome aboard");
    expect(received.text).toContain(admin.user.username);
    const link = linkIn(received);
    expect(link).toMatch(/^http:\/\/dashboard\.test\/organization\/invitation\/[\w-]{43}$/);
    // The pending invitation, with its invitee's email, is listed for administrators.
    const pending = await api.get(
      `/v7/invitee__is_invited_to__organization?$filter=is_invited_to__organization eq ${org.id}&$expand=invitee($select=email),organization_membership_role($select=name)`,
      admin.token,
    );
    expect(pending.json.d).toMatchObject([
      {
        invitee: [{ email: invitee.user.email }],
        organization_membership_role: [{ name: "administrator" }],
        message: "Welcome aboard",
      },
    ]);
    const token = link.split("/").pop();
    expect((await api.post(`/org/v1/invitation/${token}`, undefined)).status).toBe(401);
    const accepted = await api.post(`/org/v1/invitation/${token}`, undefined, invitee.token);
    expect(accepted.status).toBe(200);
    expect(accepted.json).toEqual({ organization: org.id });
    expect((await membershipOf(invitee.user.id, org.id))?.role).toBe("administrator");
    const reused = await api.post(`/org/v1/invitation/${token}`, undefined, invitee.token);
    expect(reused.status).toBe(400);
    expect(reused.json).toEqual({ code: "invitation_invalid", message: "Invitation invalid or expired" });
  });

  it("expired or unknown tokens are invitation_invalid; a revoked invitation cannot be accepted", async () => {
    const admin = await t.factories.user();
    const invitee = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user] });
    const created = await api.post(
      "/v7/invitee__is_invited_to__organization",
      { invitee: invitee.user.email, is_invited_to__organization: org.id },
      admin.token,
    );
    const token = linkIn(await mail.next(invitee.user.email ?? ""))
      .split("/")
      .pop();
    await t.db.query("UPDATE organization_invite SET expires_at = now() - interval '1 second' WHERE id = $1", [
      created.json.id,
    ]);
    expect((await api.post(`/org/v1/invitation/${token}`, undefined, invitee.token)).json.code).toBe(
      "invitation_invalid",
    );
    expect((await api.post("/org/v1/invitation/nonsense", undefined, invitee.token)).status).toBe(400);
    expect((await api.del(`/v7/invitee__is_invited_to__organization(${created.json.id})`, admin.token)).status).toBe(
      200,
    );
    const { rows } = await t.db.query("SELECT 1 FROM organization_invite WHERE id = $1", [created.json.id]);
    expect(rows).toHaveLength(0);
    expect(await membershipOf(invitee.user.id, org.id)).toBeUndefined();
  });

  it("registration with an invitation accepts it; an invalid one does not block the sign-up", async () => {
    const admin = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user] });
    await api.post(
      "/v7/invitee__is_invited_to__organization",
      { invitee: "signup-invitee@example.com", is_invited_to__organization: org.id },
      admin.token,
    );
    const token = linkIn(await mail.next("signup-invitee@example.com"))
      .split("/")
      .pop();
    const registered = await api.post("/user/register", {
      email: "signup-invitee@example.com",
      password: "a-good-password",
      invitation_type: "organization",
      invitation_token: token,
    });
    expect(registered.status).toBe(200);
    const userId = Number(claimsOf(registered.text).id);
    expect((await membershipOf(userId, org.id))?.role).toBe("member");
    const other = await api.post("/user/register", {
      email: "signup-bad-token@example.com",
      password: "a-good-password",
      invitation_type: "application",
      invitation_token: "not-a-token",
    });
    expect(other.status).toBe(200);
  });
});

describe("fleet members and invitations", () => {
  it("are added by username (case-insensitive), must be organization members, default to developer", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const outsider = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const fleet = await t.factories.fleet(org);
    const add = (body: Record<string, unknown>, token = admin.token) =>
      api.post("/v7/user_application_membership", { is_member_of__application: fleet.id, ...body }, token);
    const unknown = await add({ username: "nobody-here" });
    expect([unknown.status, unknown.text]).toEqual([400, "User not found: nobody-here"]);
    const notMember = await add({ username: outsider.user.username });
    expect([notMember.status, notMember.text]).toEqual([
      400,
      "It is necessary that each user (Auth) that is member of an application that has an organization, is member of the organization",
    ]);
    const created = await add({ username: member.user.username.toUpperCase() });
    expect(created.status).toBe(201);
    const { rows } = await t.db.query<{ name: string }>(
      `SELECT r.name FROM user_application_membership m JOIN application_membership_role r ON r.id = m.application_membership_role WHERE m.id = $1`,
      [created.json.id],
    );
    expect(rows[0]?.name).toBe("developer");
    expect((await add({ username: member.user.username })).status).toBe(409);
    // A member of the organization without a role on the fleet cannot add people.
    const third = await t.factories.user();
    await t.db.query(
      `INSERT INTO organization_membership ("user", is_member_of__organization, organization_membership_role) SELECT $1, $2, id FROM organization_membership_role WHERE name = 'member'`,
      [third.user.id, org.id],
    );
    expect((await add({ username: third.user.username }, member.token)).status).toBe(401);
    // Role changes and removal.
    const observer = await roleId("application_membership_role", "observer");
    expect(
      (
        await api.patch(
          `/v7/user_application_membership(${created.json.id})`,
          { application_membership_role: observer },
          admin.token,
        )
      ).status,
    ).toBe(200);
    expect((await api.del(`/v7/user_application_membership(${created.json.id})`, admin.token)).status).toBe(200);
  });

  it("paid-only roles are refused on the free plan; operator roles only on fleets", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const fleet = await t.factories.fleet(org);
    const block = await t.factories.fleet(org, { className: "block" });
    const operator = await roleId("application_membership_role", "operator");
    const safeDeveloper = await roleId("application_membership_role", "safe-developer");
    const add = (app: number, role: number) =>
      api.post(
        "/v7/user_application_membership",
        { username: member.user.username, is_member_of__application: app, application_membership_role: role },
        admin.token,
      );
    const refused = await add(fleet.id, operator);
    expect([refused.status, refused.text]).toEqual([400, "access role only available for paid users"]);
    const team = await t.factories.team(org, { members: [] });
    const access = await api.post(
      "/v7/team_application_access",
      { team: team.id, grants_access_to__application: fleet.id, application_membership_role: safeDeveloper },
      admin.token,
    );
    expect(access.text).toBe("access role only available for paid users");
    const invited = await api.post(
      "/v7/invitee__is_invited_to__application",
      { invitee: "paid@example.com", is_invited_to__application: fleet.id, application_membership_role: operator },
      admin.token,
    );
    expect(invited.text).toBe("access role only available for paid users");
    await subscribe(org.id, "pilot-v2");
    const onBlock = await add(block.id, operator);
    expect([onBlock.status, onBlock.text]).toEqual([400, "Operator roles are only available for fleets"]);
    expect((await add(fleet.id, operator)).status).toBe(201);
    expect((await add(block.id, safeDeveloper)).status).toBe(201);
  });

  it("the limited roles need a plan providing preview:safe-roles; operator only a paid plan (spec 1 §6.2)", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const fleet = await t.factories.fleet(org);
    // Solo is a paid legacy plan without the preview add-on.
    await subscribe(org.id, "solo");
    const operator = await roleId("application_membership_role", "operator");
    const safeOperator = await roleId("application_membership_role", "safe-operator");
    const safeDeveloper = await roleId("application_membership_role", "safe-developer");
    const notInPlan =
      "Limited roles (safe-developer, safe-operator) are a preview add-on the organization's plan does not include";
    const add = (role: number) =>
      api.post(
        "/v7/user_application_membership",
        { username: member.user.username, is_member_of__application: fleet.id, application_membership_role: role },
        admin.token,
      );
    const refused = await add(safeOperator);
    expect([refused.status, refused.text]).toEqual([400, notInPlan]);
    const team = await t.factories.team(org, { members: [] });
    const access = await api.post(
      "/v7/team_application_access",
      { team: team.id, grants_access_to__application: fleet.id, application_membership_role: safeDeveloper },
      admin.token,
    );
    expect([access.status, access.text]).toEqual([400, notInPlan]);
    const invited = await api.post(
      "/v7/invitee__is_invited_to__application",
      { invitee: "safe@example.com", is_invited_to__application: fleet.id, application_membership_role: safeDeveloper },
      admin.token,
    );
    expect([invited.status, invited.text]).toEqual([400, notInPlan]);
    const given = await add(operator);
    expect(given.status).toBe(201);
    // A role change to a limited role is refused the same way.
    const changed = await api.patch(
      `/v7/user_application_membership(${given.json.id})`,
      { application_membership_role: safeDeveloper },
      admin.token,
    );
    expect([changed.status, changed.text]).toEqual([400, notInPlan]);
    // On prototype, which provides the feature, the same change is allowed.
    await t.db.query(`UPDATE "subscription" SET ends_on__date = now() WHERE is_for__organization = $1`, [org.id]);
    await subscribe(org.id, "prototype-v2");
    const allowed = await api.patch(
      `/v7/user_application_membership(${given.json.id})`,
      { application_membership_role: safeDeveloper },
      admin.token,
    );
    expect(allowed.status).toBe(200);
  });

  it("fleet invitations: mail, accept (joins the organization as member), revoke", async () => {
    const admin = await t.factories.user();
    const invitee = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user] });
    const fleet = await t.factories.fleet(org);
    const observer = await roleId("application_membership_role", "observer");
    const created = await api.post(
      "/v7/invitee__is_invited_to__application",
      {
        invitee: ` ${invitee.user.email} `,
        is_invited_to__application: fleet.id,
        application_membership_role: observer,
      },
      admin.token,
    );
    expect(created.status).toBe(201);
    const again = await api.post(
      "/v7/invitee__is_invited_to__application",
      { invitee: invitee.user.email, is_invited_to__application: fleet.id },
      admin.token,
    );
    expect(again.text).toBe("This user has already been invited");
    const received = await mail.next(invitee.user.email ?? "");
    expect(received.subject).toBe(`You are invited to the fleet ${fleet.app_name}`);
    const link = linkIn(received);
    expect(link).toMatch(/^http:\/\/dashboard\.test\/invitation\/[\w-]{43}$/);
    const accepted = await api.post(`/user/v1/invitation/${link.split("/").pop()}`, undefined, invitee.token);
    expect(accepted.json).toEqual({ application: fleet.id });
    expect((await membershipOf(invitee.user.id, org.id))?.role).toBe("member");
    const readable = await api.get(`/v7/application(${fleet.id})?$select=id`, invitee.token);
    expect(readable.json.d).toHaveLength(1);
    const existing = await api.post(
      "/v7/invitee__is_invited_to__application",
      { invitee: invitee.user.email, is_invited_to__application: fleet.id },
      admin.token,
    );
    // Invited again, as balena's API does (the dashboard refuses first); so is an organization
    // administrator, who already administers every fleet of it.
    expect(existing.status).toBe(201);
    const administrator = await api.post(
      "/v7/invitee__is_invited_to__application",
      { invitee: admin.user.email, is_invited_to__application: fleet.id },
      admin.token,
    );
    expect(administrator.status).toBe(201);
    const other = await api.post(
      "/v7/invitee__is_invited_to__application",
      { invitee: "revoked@example.com", is_invited_to__application: fleet.id },
      admin.token,
    );
    expect((await api.del(`/v7/invitee__is_invited_to__application(${other.json.id})`, admin.token)).status).toBe(200);
  });
});

describe("teams", () => {
  it("need a name unique case-insensitively in the organization; members must belong to it", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const outsider = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const otherOrg = await t.factories.organization({ admins: [admin.user] });
    const create = (name: unknown, organization = org.id, token = admin.token) =>
      api.post("/v7/team", { name, belongs_to__organization: organization }, token);
    expect((await create("  ")).text).toBe("A name is required");
    const team = await create("Ops");
    expect(team.status).toBe(201);
    const dup = await create("OPS");
    expect([dup.status, dup.text]).toEqual([409, NAME_TAKEN("team")]);
    expect((await create("ops", otherOrg.id)).status).toBe(201);
    expect((await create("Members cannot", org.id, member.token)).status).toBe(401);
    const second = await create("Dev");
    expect((await api.patch(`/v7/team(${second.json.id})`, { name: "oPs" }, admin.token)).text).toBe(
      NAME_TAKEN("team"),
    );
    expect((await api.patch(`/v7/team(${second.json.id})`, { name: "Developers" }, admin.token)).status).toBe(200);
    const joined = await api.post(
      "/v7/team_membership",
      { username: member.user.username, is_member_of__team: team.json.id },
      admin.token,
    );
    expect(joined.status).toBe(201);
    const refused = await api.post(
      "/v7/team_membership",
      { username: outsider.user.username, is_member_of__team: team.json.id },
      admin.token,
    );
    expect(refused.status).toBe(400);
    expect(refused.text).toBe(
      "It is necessary that each user that is member of a team, is member of the organization of the team",
    );
    expect((await api.del(`/v7/team_membership(${joined.json.id})`, admin.token)).status).toBe(200);
    expect((await api.del(`/v7/team(${second.json.id})`, admin.token)).status).toBe(200);
  });

  it("team access: grant, change and remove a role on a fleet of the same organization", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const otherOrg = await t.factories.organization({ admins: [admin.user] });
    const fleet = await t.factories.fleet(org);
    const foreignFleet = await t.factories.fleet(otherOrg);
    const team = await t.factories.team(org, { members: [member.user] });
    const observer = await roleId("application_membership_role", "observer");
    const developer = await roleId("application_membership_role", "developer");
    const cross = await api.post(
      "/v7/team_application_access",
      { team: team.id, grants_access_to__application: foreignFleet.id, application_membership_role: observer },
      admin.token,
    );
    expect(cross.text).toBe("The team and the fleet must belong to the same organization");
    const granted = await api.post(
      "/v7/team_application_access",
      { team: team.id, grants_access_to__application: fleet.id, application_membership_role: observer },
      admin.token,
    );
    expect(granted.status).toBe(201);
    const seen = await api.get(
      `/v7/application(${fleet.id})?$select=id&$expand=fleet_access($select=role)`,
      member.token,
    );
    expect(seen.json.d).toMatchObject([{ fleet_access: [{ role: "observer" }] }]);
    expect(
      (
        await api.patch(
          `/v7/team_application_access(${granted.json.id})`,
          { application_membership_role: developer },
          admin.token,
        )
      ).status,
    ).toBe(200);
    expect((await api.del(`/v7/team_application_access(${granted.json.id})`, admin.token)).status).toBe(200);
    expect((await api.get(`/v7/application(${fleet.id})?$select=id`, member.token)).json.d).toEqual([]);
  });
});

describe("log in as user", () => {
  it("gives a platform administrator a token of the user with actualUser, audited; others are refused", async () => {
    const admin = await t.factories.user();
    await grantGlobalRole(t.db.orm, admin.user.id, "balena_admin");
    const adminToken = await t.ctx.tokens.start(admin.user);
    const target = await t.factories.user();
    const response = await api.patch("/login_", { username: target.user.username.toUpperCase() }, adminToken);
    expect(response.status).toBe(200);
    expect(claimsOf(response.text)).toMatchObject({
      id: target.user.id,
      actualUser: admin.user.id,
      username: target.user.username,
    });
    const whoami = await api.get("/actor/v1/whoami", response.text);
    expect(whoami.json).toMatchObject({ actorTypeId: target.user.id });
    const refreshed = await api.get("/user/v1/refresh-token", response.text);
    expect(claimsOf(refreshed.text).actualUser).toBe(admin.user.id);
    const { rows } = await t.db.query<{ action: string; target_user: number }>(
      "SELECT action, target_user FROM audit_event WHERE actor_user = $1",
      [admin.user.id],
    );
    expect(rows).toEqual([{ action: "login_as_user", target_user: target.user.id }]);
    // Not an administrator; the impersonated token itself; an unknown user.
    expect((await api.patch("/login_", { username: admin.user.username }, target.token)).status).toBe(403);
    expect((await api.patch("/login_", { username: admin.user.username }, response.text)).status).toBe(403);
    expect((await api.patch("/login_", { username: "no-such-user" }, adminToken)).status).toBe(400);
    expect((await api.patch("/login_", {}, adminToken)).status).toBe(400);
  });
});

describe("organization logo", () => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100, 1)]);
  const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 2)]);
  const put = (id: number, body: Buffer, type: string, token: string) =>
    fetch(`${t.url}/organization/${id}/logo`, {
      method: "PUT",
      headers: { "content-type": type, authorization: `Bearer ${token}` },
      body: new Uint8Array(body),
    });

  it("PNG or JPEG up to 1,000,000 bytes, by administrators; served to members with its type; removable", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const outsider = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const none = await fetch(`${t.url}/organization/${org.id}/logo`, {
      headers: { authorization: `Bearer ${member.token}` },
    });
    expect(none.status).toBe(404);

    const gif = await put(org.id, Buffer.from("GIF89a........"), "image/gif", admin.token);
    expect([gif.status, await gif.json()]).toEqual([
      400,
      { code: "logo_invalid", message: "The logo must be a PNG or JPEG image" },
    ]);
    const lying = await put(org.id, Buffer.from("not really a png at all"), "image/png", admin.token);
    expect(((await lying.json()) as { code: string }).code).toBe("logo_invalid");
    const mismatch = await put(org.id, jpeg, "image/png", admin.token);
    expect(mismatch.status).toBe(400);
    const big = Buffer.concat([png, Buffer.alloc(1_000_001 - png.length)]);
    const tooLarge = await put(org.id, big, "image/png", admin.token);
    expect([tooLarge.status, ((await tooLarge.json()) as { code: string }).code]).toEqual([413, "logo_too_large"]);
    const exact = Buffer.concat([png, Buffer.alloc(1_000_000 - png.length)]);
    expect((await put(org.id, exact, "image/png", admin.token)).status).toBe(200);
    expect((await put(org.id, png, "image/png", member.token)).status).toBe(403);
    expect((await put(org.id, png, "image/png", outsider.token)).status).toBe(404);

    const saved = await put(org.id, jpeg, "image/jpeg", admin.token);
    const { logo_image: logo } = (await saved.json()) as {
      logo_image: { href: string; content_type: string; size: number };
    };
    expect(logo).toMatchObject({ content_type: "image/jpeg", size: jpeg.length });
    expect(logo.href).toMatch(new RegExp(`^/organization/${org.id}/logo\\?v=\\d+$`));
    const listed = await api.get(`/v7/organization(${org.id})?$select=logo_image`, member.token);
    expect(listed.json.d).toMatchObject([{ logo_image: logo }]);
    const served = await fetch(`${t.url}${logo.href}`, { headers: { authorization: `Bearer ${member.token}` } });
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/jpeg");
    expect(served.headers.get("cache-control")).toBe("private, max-age=86400");
    expect(Buffer.from(await served.arrayBuffer()).equals(jpeg)).toBe(true);
    expect(fs.existsSync(path.join(t.config.dataDir, "storage", "organization-logos", String(org.id)))).toBe(true);
    const hidden = await fetch(`${t.url}${logo.href}`, { headers: { authorization: `Bearer ${outsider.token}` } });
    expect(hidden.status).toBe(404);

    const removed = await fetch(`${t.url}/organization/${org.id}/logo`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(removed.status).toBe(200);
    expect((await api.get(`/v7/organization(${org.id})?$select=logo_image`, admin.token)).json.d).toMatchObject([
      { logo_image: null },
    ]);
    expect(
      (await fetch(`${t.url}/organization/${org.id}/logo`, { headers: { authorization: `Bearer ${admin.token}` } }))
        .status,
    ).toBe(404);
    // Deleting the organization removes a stored logo file too.
    await put(org.id, png, "image/png", admin.token);
    const file = path.join(t.config.dataDir, "storage", "organization-logos", String(org.id));
    expect(fs.existsSync(file)).toBe(true);
    expect((await api.del(`/v7/organization(${org.id})`, admin.token)).status).toBe(200);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("organization logo sent with the organization", () => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100, 1)]);
  type LogoRow = { logo_image: { href: string } | null };
  const logoOf = async (id: number, token: string) =>
    ((await api.get(`/v7/organization(${id})?$select=logo_image`, token)).json.d as LogoRow[])[0]?.logo_image;
  const dataUrl = (type: string, name: string, bytes: Buffer) =>
    `data:${type};name=${encodeURIComponent(name)};base64,${bytes.toString("base64")}`;

  it("POST and PATCH take logo_image as a data URL of type, name and base64 parts (spec 3 §7, spec 1 §5)", async () => {
    const { user, token } = await t.factories.user();
    await t.factories.organization({ admins: [user] });
    const created = await api.post(
      "/v7/organization",
      { name: "With logo", logo_image: dataUrl("image/png", "our logo.png", png) },
      token,
    );
    expect(created.status).toBe(201);
    const id = Number(created.json.id);
    const logo = await logoOf(id, token);
    expect(logo).toMatchObject({ content_type: "image/png", size: png.length, filename: "logo.png" });
    const served = await fetch(`${t.url}${logo?.href}`, { headers: { authorization: `Bearer ${token}` } });
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);

    // Refused with the logo's own words; nothing is created.
    const gif = await api.post(
      "/v7/organization",
      { name: "Gif logo", logo_image: dataUrl("image/gif", "a.gif", Buffer.from("GIF89a....")) },
      token,
    );
    expect([gif.status, gif.text]).toEqual([400, "The logo must be a PNG or JPEG image"]);
    const big = Buffer.concat([png, Buffer.alloc(1_000_001 - png.length)]);
    const tooLarge = await api.post(
      "/v7/organization",
      { name: "Big logo", logo_image: dataUrl("image/png", "big.png", big) },
      token,
    );
    expect(tooLarge.status).toBe(413);
    const notDataUrl = await api.post("/v7/organization", { name: "Url logo", logo_image: "https://x/y.png" }, token);
    expect(notDataUrl.status).toBe(400);
    expect(notDataUrl.text).toMatch(/^logo_image must be a data URL/);
    const { rows } = await t.db.query("SELECT 1 FROM organization WHERE name IN ('Gif logo', 'Big logo', 'Url logo')");
    expect(rows).toHaveLength(0);

    // Without a logo, and a PATCH that sets and then removes one.
    const plain = await api.post("/v7/organization", { name: "No logo" }, token);
    expect(plain.json).toMatchObject({ logo_image: null });
    const plainId = Number(plain.json.id);
    const patched = await api.patch(
      `/v7/organization(${plainId})`,
      { logo_image: dataUrl("image/png", "l.png", png) },
      token,
    );
    expect(patched.status).toBe(200);
    expect(await logoOf(plainId, token)).toMatchObject({ content_type: "image/png" });
    expect((await api.patch(`/v7/organization(${plainId})`, { logo_image: null }, token)).status).toBe(200);
    expect(await logoOf(plainId, token)).toBeNull();
  });
});

describe("organization roles", () => {
  it("an administrator may demote themselves while another administrator remains; a member cannot promote themselves", async () => {
    const a = await t.factories.user();
    const b = await t.factories.user();
    const m = await t.factories.user();
    const org = await t.factories.organization({ admins: [a.user, b.user], members: [m.user] });
    const memberRole = await roleId("organization_membership_role", "member");
    const adminRole = await roleId("organization_membership_role", "administrator");
    const aMembership = await membershipOf(a.user.id, org.id);
    const demoted = await api.patch(
      `/v7/organization_membership(${aMembership?.id})`,
      { organization_membership_role: memberRole },
      a.token,
    );
    expect(demoted.status).toBe(200);
    expect((await membershipOf(a.user.id, org.id))?.role).toBe("member");
    const mMembership = await membershipOf(m.user.id, org.id);
    const promoted = await api.patch(
      `/v7/organization_membership(${mMembership?.id})`,
      { organization_membership_role: adminRole },
      m.token,
    );
    expect(promoted.status).toBe(401);
    expect((await membershipOf(m.user.id, org.id))?.role).toBe("member");
  });
});

describe("demo", () => {
  it("the demo account administers organization Demo with a second member in a team", async () => {
    const config = loadConfig({
      FLOTILLA_DATA_DIR: t.config.dataDir,
      FLOTILLA_DEMO: "1",
      FLOTILLA_DEMO_PASSWORD: "demo-password-1",
    });
    await seedDemo(t.db, config, pino({ level: "silent" }), true);
    const login = await api.post("/login_", { username: "demo@example.com", password: "demo-password-1" });
    expect(login.status).toBe(200);
    const orgs = await api.get(
      "/v7/organization?$select=name,handle&$expand=organization_membership($select=id;$expand=user($select=username),organization_membership_role($select=name);$orderby=id asc),owns__team($select=name;$expand=team_membership($select=id;$expand=user($select=username)))",
      login.text,
    );
    expect(orgs.json.d).toMatchObject([
      {
        name: "Demo",
        handle: "demo",
        organization_membership: [
          { user: [{ username: "demo" }], organization_membership_role: [{ name: "administrator" }] },
          { user: [{ username: "demo-member" }], organization_membership_role: [{ name: "member" }] },
        ],
        owns__team: [{ name: "Operators", team_membership: [{ user: [{ username: "demo-member" }] }] }],
      },
    ]);
    const member = await api.post("/login_", { username: "demo-member@example.com", password: "demo-password-1" });
    expect(member.status).toBe(200);
  });
});

describe("malformed requests", () => {
  it("are answered 4xx, never 500", async () => {
    const admin = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user] });
    const fleet = await t.factories.fleet(org);
    const team = await t.factories.team(org, { members: [] });
    const cases: [string, string, unknown][] = [
      ["POST", "/v7/team", { name: "No org" }],
      ["POST", "/v7/team", { name: 5, belongs_to__organization: org.id }],
      ["POST", "/v7/team", { name: "x", belongs_to__organization: "abc" }],
      ["POST", "/v7/team_membership", { username: 42, is_member_of__team: team.id }],
      ["POST", "/v7/team_membership", { is_member_of__team: team.id }],
      ["POST", "/v7/team_membership", { username: "", is_member_of__team: team.id }],
      ["POST", "/v7/user_application_membership", { username: "x" }],
      ["POST", "/v7/user_application_membership", { is_member_of__application: fleet.id }],
      [
        "POST",
        "/v7/user_application_membership",
        { username: admin.user.username, is_member_of__application: fleet.id, application_membership_role: 999999 },
      ],
      ["POST", "/v7/team_application_access", { team: team.id }],
      ["POST", "/v7/team_application_access", { grants_access_to__application: fleet.id }],
      ["POST", "/v7/invitee__is_invited_to__organization", { invitee: "a@example.com" }],
      [
        "POST",
        "/v7/invitee__is_invited_to__organization",
        { invitee: ["a@example.com"], is_invited_to__organization: org.id },
      ],
      [
        "POST",
        "/v7/invitee__is_invited_to__organization",
        { invitee: "a@example.com", is_invited_to__organization: org.id, organization_membership_role: 999999 },
      ],
      ["POST", "/v7/invitee__is_invited_to__application", { invitee: "a@example.com" }],
      ["POST", "/v7/invitee__is_invited_to__application", { invitee: null, is_invited_to__application: fleet.id }],
      ["POST", "/v7/organization", { name: null }],
      ["POST", "/v7/organization", { name: "x".repeat(101) }],
      ["PATCH", `/v7/organization(${org.id})`, { name: 7 }],
      ["PATCH", `/v7/team(${team.id})`, { belongs_to__organization: org.id }],
      ["PATCH", "/login_", { username: 5 }],
      [
        "PATCH",
        `/v7/organization_membership?$filter=is_member_of__organization eq ${org.id}`,
        { organization_membership_role: null },
      ],
      [
        "POST",
        "/v7/invitee__is_invited_to__organization",
        { invitee: "long@example.com", is_invited_to__organization: org.id, message: "x".repeat(1001) },
      ],
      ["POST", "/org/v1/invitation/%20", undefined],
      ["POST", `/user/v1/invitation/${"x".repeat(300)}`, undefined],
      ["PUT", `/organization/abc/logo`, undefined],
      ["PUT", `/organization/99999999/logo`, undefined],
      ["GET", `/organization/${org.id}/logo`, undefined],
      ["DELETE", `/organization/99999/logo`, undefined],
    ];
    for (const [method, url, body] of cases) {
      const response = await api.call(method, url, { token: admin.token, body });
      expect([url, response.status < 500 && response.status >= 400]).toEqual([url, true]);
    }
  });
});
