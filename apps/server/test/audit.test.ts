import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDITED_RESOURCES, auditSql } from "../src/features/audit/hooks.ts";
import { runAuditRetention } from "../src/features/audit/routes.ts";
import { createTestApp, type TestApp } from "./harness.ts";

type Entry = {
  id: number;
  action: string;
  organization: number | null;
  actor: { user: number | null; username: string | null; api_key: number | null; api_key_name: string | null };
  target: { type: string | null; id: string | null };
  client_address: string | null;
  details: Record<string, unknown> | null;
};

/** The audit log (docs/audit-and-webhooks.md): what is recorded, who reads it, CSV, retention. */
describe("audit log", () => {
  let t: TestApp;
  let admin: Awaited<ReturnType<TestApp["factories"]["user"]>>;
  let member: Awaited<ReturnType<TestApp["factories"]["user"]>>;
  let outsider: Awaited<ReturnType<TestApp["factories"]["user"]>>;
  let orgId: number;
  let fleetId: number;

  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const response = await t.app.inject({
      method: method as "GET",
      url: path,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return response;
  };
  const entries = async (query = "") => {
    const response = await call(admin.token, "GET", `/audit/v1/organizations/${orgId}/entries${query}`);
    expect(response.statusCode).toBe(200);
    return response.json() as { entries: Entry[]; next: number | null };
  };

  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.factories.user();
    member = await t.factories.user();
    outsider = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    await t.factories.organization({ admins: [outsider.user] });
    orgId = org.id;
    fleetId = (await t.factories.fleet(org)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("records sign-ins, failed and successful, with the client address and no password", async () => {
    const bad = await t.app.inject({
      method: "POST",
      url: "/login_",
      payload: { username: admin.user.email, password: "wrong-password-123" },
    });
    expect(bad.statusCode).toBe(401);
    const good = await t.app.inject({
      method: "POST",
      url: "/login_",
      payload: { username: admin.user.email, password: admin.password },
    });
    expect(good.statusCode).toBe(200);
    const { rows } = await t.db.query<{
      action: string;
      actor_user: number | null;
      client_address: string;
      details: unknown;
    }>(
      `SELECT action, actor_user, client_address, details FROM "audit_event"
        WHERE target_user = $1 AND action LIKE 'sign_in.%' ORDER BY id`,
      [admin.user.id],
    );
    expect(rows.map((r) => r.action)).toEqual(["sign_in.failed", "sign_in.succeeded"]);
    expect(rows[0]?.actor_user).toBeNull();
    expect(rows[1]?.actor_user).toBe(admin.user.id);
    expect(rows[0]?.client_address).toBe("127.0.0.1");
    expect(JSON.stringify(rows)).not.toContain("wrong-password-123");
  });

  it("records a variable's name but never its value, in the organization's log", async () => {
    const created = await call(admin.token, "POST", "/v7/application_environment_variable", {
      application: fleetId,
      name: "DB_PASSWORD",
      value: "s3cret-value",
    });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: number }).id;
    expect(
      (await call(admin.token, "PATCH", `/v7/application_environment_variable(${id})`, { value: "other" })).statusCode,
    ).toBe(200);
    expect((await call(admin.token, "DELETE", `/v7/application_environment_variable(${id})`)).statusCode).toBe(200);
    const { entries: found } = await entries("?action=variable.");
    expect(found.map((e) => e.action)).toEqual(["variable.deleted", "variable.updated", "variable.created"]);
    expect(found[0]).toMatchObject({
      organization: orgId,
      actor: { user: admin.user.id },
      target: { type: "fleet", id: String(fleetId) },
      client_address: "127.0.0.1",
      details: { name: "DB_PASSWORD" },
    });
    expect(JSON.stringify(found)).not.toContain("s3cret-value");
  });

  it("records membership changes and API keys", async () => {
    const key = await call(admin.token, "POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: fleetId,
      roles: ["provisioning-api-key"],
      name: "prov",
    });
    expect(key.statusCode).toBe(200);
    const { rows } = await t.db.query<{ id: number }>(`SELECT id FROM "organization_membership" WHERE "user" = $1`, [
      member.user.id,
    ]);
    const membership = rows[0]?.id;
    const removed = await call(admin.token, "DELETE", `/v7/organization_membership(${membership})`);
    expect(removed.statusCode).toBe(200);
    const { entries: found } = await entries();
    const actions = found.map((e) => e.action);
    expect(actions).toContain("api_key.created");
    expect(actions).toContain("membership.deleted");
    expect(found.find((e) => e.action === "membership.deleted")).toMatchObject({
      target: { type: "user", id: String(member.user.id) },
      details: { role: "member" },
    });
    // Put the member back for the permission checks below.
    await t.db.query(
      `INSERT INTO "organization_membership" ("user", is_member_of__organization, organization_membership_role)
       SELECT $1, $2, id FROM "organization_membership_role" WHERE name = 'member'`,
      [member.user.id, orgId],
    );
  });

  it("records teams and fleet invitations", async () => {
    const team = await call(admin.token, "POST", "/v7/team", { belongs_to__organization: orgId, name: "Night shift" });
    expect(team.statusCode).toBe(201);
    expect((await call(admin.token, "DELETE", `/v7/team(${team.json().id})`)).statusCode).toBe(200);
    const { rows: roles } = await t.db.query<{ id: number }>(
      `SELECT id FROM "application_membership_role" WHERE name = 'developer'`,
    );
    const invite = await call(admin.token, "POST", "/v7/invitee__is_invited_to__application", {
      invitee: "guest@example.com",
      is_invited_to__application: fleetId,
      application_membership_role: roles[0]?.id,
    });
    expect(invite.statusCode, invite.body).toBe(201);
    const { entries: found } = await entries();
    expect(found.filter((e) => e.action.startsWith("team.")).map((e) => [e.action, e.details])).toEqual([
      ["team.deleted", { name: "Night shift" }],
      ["team.created", { name: "Night shift" }],
    ]);
    expect(found.find((e) => e.action === "fleet_invitation.created")).toMatchObject({
      target: { type: "invitation" },
      details: { email: "guest@example.com", fleet: fleetId, role: "developer" },
    });
  });

  it("records release invalidation and release pins of fleets and devices", async () => {
    const fleetRow = (
      await t.db.query<{ id: number; is_for__device_type: number }>(
        `SELECT id, is_for__device_type FROM "application" WHERE id = $1`,
        [fleetId],
      )
    ).rows[0] as { id: number; is_for__device_type: number };
    const release = await t.factories.release(fleetRow);
    const device = await t.factories.device(fleetRow);
    const writes: [string, unknown][] = [
      [`/v7/release(${release.id})`, { is_invalidated: true }],
      [`/v7/release(${release.id})`, { is_invalidated: false }],
      [`/v7/application(${fleetId})`, { should_be_running__release: release.id, should_track_latest_release: false }],
      [`/v7/device(${device.id})`, { is_pinned_on__release: release.id }],
    ];
    for (const [path, body] of writes) {
      const response = await call(admin.token, "PATCH", path, body);
      expect(response.statusCode, `${path} ${response.body}`).toBe(200);
    }
    const { entries: found } = await entries("?limit=4");
    expect(found.map((e) => e.action)).toEqual([
      "device.release_pinned",
      "fleet.release_pinned",
      "release.revalidated",
      "release.invalidated",
    ]);
    expect(found[0]).toMatchObject({
      target: { type: "device", id: String(device.id) },
      details: { release: release.id },
    });
  });

  it("filters, pages and exports CSV", async () => {
    const first = await entries("?limit=1");
    expect(first.entries).toHaveLength(1);
    expect(first.next).toBe(first.entries[0]?.id);
    const second = await entries(`?limit=1&before=${first.next}`);
    expect(second.entries[0]?.id).toBeLessThan(first.next as number);
    const future = await entries(`?from=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`);
    expect(future.entries).toEqual([]);
    expect((await entries(`?actor=${admin.user.id}&target_type=fleet`)).entries.length).toBeGreaterThan(0);

    const csv = await call(admin.token, "GET", `/audit/v1/organizations/${orgId}/entries.csv?action=variable.`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers["content-type"]).toContain("text/csv");
    const lines = csv.body.trim().split("\r\n");
    expect(lines[0]).toBe(
      "id,time,actor_user,actor_username,actor_api_key,organization,action,target_type,target_id,client_address,details",
    );
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain("variable.deleted");

    const bad = await call(admin.token, "GET", `/audit/v1/organizations/${orgId}/entries?from=yesterday&limit=9999`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message ?? bad.body).toMatch(/from|limit/);
  });

  it("is for the organization's administrators: members are refused, others see no organization", async () => {
    expect((await call(member.token, "GET", `/audit/v1/organizations/${orgId}/entries`)).statusCode).toBe(403);
    expect((await call(outsider.token, "GET", `/audit/v1/organizations/${orgId}/entries`)).statusCode).toBe(404);
    expect((await call(outsider.token, "GET", `/audit/v1/organizations/${orgId}/entries.csv`)).statusCode).toBe(404);
    expect((await call(admin.token, "GET", "/audit/v1/entries")).statusCode).toBe(403);
  });

  it("cannot be changed: no API writes it, and the database refuses updates", async () => {
    for (const method of ["PATCH", "DELETE", "POST"]) {
      const response = await call(admin.token, method, "/v7/audit_event(1)", method === "DELETE" ? undefined : {});
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
      expect(response.statusCode).toBeLessThan(500);
    }
    expect((await call(admin.token, "DELETE", `/audit/v1/organizations/${orgId}/entries`)).statusCode).toBe(404);
    await expect(t.db.query(`UPDATE "audit_event" SET action = 'x'`)).rejects.toThrow(/append-only/);
  });

  it("has a valid statement for every audited resource (a bad one would fail the write itself)", async () => {
    for (const [resource, audited] of Object.entries(AUDITED_RESOURCES)) {
      await expect(
        t.db.query(auditSql(audited), [null, null, "check", audited.targetType, null, [0]]),
        resource,
      ).resolves.toBeDefined();
    }
  });

  it("prunes entries older than the retention", async () => {
    await t.db.query(
      `INSERT INTO "audit_event" (organization, action, created_at) VALUES ($1, 'old.entry', now() - interval '40 days')`,
      [orgId],
    );
    expect(await runAuditRetention(t.db, 30)).toBe(1);
    expect((await entries("?action=old.entry")).entries).toEqual([]);
  });

  it("names the personal API key a change was made with, while the key exists", async () => {
    const created = await call(admin.token, "POST", "/api-key/user/full", { name: "deploy-bot", expiryDate: null });
    expect(created.statusCode).toBe(200);
    const key = created.json() as string;
    const variable = await call(key, "POST", "/v7/application_environment_variable", {
      application: fleetId,
      name: "KEYED_VAR",
      value: "x",
    });
    expect(variable.statusCode).toBe(201);
    const { entries: found } = await entries("?action=variable.created");
    const entry = found.find((e) => e.details?.name === "KEYED_VAR");
    expect(entry?.actor).toMatchObject({
      user: admin.user.id,
      username: admin.user.username,
      api_key_name: "deploy-bot",
    });
    expect(entry?.actor.api_key).toEqual(expect.any(Number));
    // The CSV has the key's id, as before: the column set is a contract with spreadsheets.
    const csv = await call(admin.token, "GET", `/audit/v1/organizations/${orgId}/entries.csv?action=variable.created`);
    expect(csv.body.split("\r\n")[0]).not.toContain("api_key_name");
  });
});
