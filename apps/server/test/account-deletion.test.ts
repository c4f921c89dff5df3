import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { client, MINUTE, withClockOffset } from "./support/accounts.ts";

let t: TestApp;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  t = await createTestApp();
  api = client(t);
});
afterAll(() => t.close());

const count = async (sql: string, values: unknown[] = []) =>
  Number((await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, values)).rows[0]?.n);

async function subscribe(organizationId: number, planCode: string) {
  await t.db.query(
    `INSERT INTO "subscription" (is_for__organization, is_for__plan, billing_cycle)
     SELECT $1, id, 'annual' FROM "plan" WHERE billing_code = $2`,
    [organizationId, planCode],
  );
}

describe("account deletion (DELETE /v7/user({id}))", () => {
  it("deletes the organizations the user alone administers, keeps shared ones, then the user with its sessions and keys", async () => {
    const { user, token } = await t.factories.user();
    const partner = await t.factories.user();
    const own = await t.factories.organization({ admins: [user] });
    const fleet = await t.factories.fleet(own);
    await t.factories.device(fleet);
    await subscribe(own.id, "free");
    const shared = await t.factories.organization({ admins: [user, partner.user] });
    const elsewhere = await t.factories.organization({ admins: [partner.user], members: [user] });
    await t.factories.organization({ admins: [user] }).then((org) => subscribe(org.id, "free"));
    const key = await api.post("/api-key/user/full", { name: "ci", expiryDate: null }, token);
    expect(key.status).toBe(200);
    await t.db.query(`INSERT INTO "user_public_key" ("user", title, public_key) VALUES ($1, 'k', 'ssh-ed25519 AAAA')`, [
      user.id,
    ]);

    const response = await api.del(`/v7/user(${user.id})`, token);
    expect(response.status).toBe(200);
    expect(await count('"user" WHERE id = $1', [user.id])).toBe(0);
    expect(await count('"actor" WHERE id = $1', [user.actor])).toBe(0);
    expect(await count('"api_key" WHERE is_of__actor = $1', [user.actor])).toBe(0);
    expect(await count('"user_session" WHERE "user" = $1', [user.id])).toBe(0);
    expect(await count('"organization" WHERE id = $1', [own.id])).toBe(0);
    expect(await count('"application" WHERE id = $1', [fleet.id])).toBe(0);
    expect(await count('"organization" WHERE id = ANY($1::int[])', [[shared.id, elsewhere.id]])).toBe(2);
    expect(await count('"organization_membership" WHERE is_member_of__organization = $1', [shared.id])).toBe(1);
    expect((await api.get("/actor/v1/whoami", token)).status).toBe(401);
    expect((await api.get("/actor/v1/whoami", JSON.parse(key.text) as string)).status).toBe(401);
  });

  it("is refused while an administered organization has a custom plan, ending with the spec's advice", async () => {
    const { user, token } = await t.factories.user();
    const org = await t.factories.organization({ admins: [user] });
    await t.db.query(
      `INSERT INTO "plan" (title, billing_code, can_self_serve) VALUES ('Enterprise custom', 'custom-acme', false)`,
    );
    await subscribe(org.id, "custom-acme");
    const response = await api.del(`/v7/user(${user.id})`, token);
    expect(response.status).toBe(400);
    expect(response.text).toBe(
      "This account cannot be deleted while an organization it administers has a custom billing plan. Please contact support.",
    );
    expect(response.text.endsWith("Please contact support.")).toBe(true);
    expect(await count('"user" WHERE id = $1', [user.id])).toBe(1);
    expect(await count('"organization" WHERE id = $1', [org.id])).toBe(1);
  });

  it("rolls back everything when it is refused midway", async () => {
    const { user, token } = await t.factories.user();
    const alone = await t.factories.organization({ admins: [user] });
    const partner = await t.factories.user();
    const custom = await t.factories.organization({ admins: [user, partner.user] });
    await t.db.query(
      `INSERT INTO "plan" (title, billing_code, can_self_serve) VALUES ('Custom two', 'custom-two', false)`,
    );
    await subscribe(custom.id, "custom-two");
    expect((await api.del(`/v7/user(${user.id})`, token)).status).toBe(400);
    expect(await count('"organization" WHERE id = $1', [alone.id])).toBe(1);
  });

  it("needs a recent sign-in, and deletes nobody else", async () => {
    const { user, token } = await t.factories.user();
    const other = await t.factories.user();
    const stale = await withClockOffset(-21 * MINUTE, () => t.ctx.tokens.start(user));
    const expired = await api.del(`/v7/user(${user.id})`, stale);
    expect(expired.status).toBe(403);
    // Under /v7 errors are plain text; the dashboard recognises this one by its words.
    expect(expired.text).toMatch(/auth(entication)?[ _]expired/i);
    const someoneElse = await api.del(`/v7/user(${other.user.id})`, token);
    expect(someoneElse.status).toBe(200);
    expect(await count('"user" WHERE id = $1', [other.user.id])).toBe(1);
  });
});
