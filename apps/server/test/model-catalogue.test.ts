import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/index.ts";
import {
  feature,
  identity_provider,
  identity_provider_membership,
  plan,
  recovery_two_factor,
  subscription,
} from "../src/db/schema/index.ts";
import { permissionsForUser } from "../src/features/data-api/permissions.ts";
import type { User } from "../src/features/users/service.ts";
import { model } from "../src/model/index.ts";
import { createPermissions, handleODataRequest } from "../src/odata/index.ts";
import { createFactories, type Factories } from "./factories.ts";
import { createTestDatabase } from "./harness.ts";

/**
 * The seeded plan catalogue (decision 13: the free plan includes 10 devices) and the permissions
 * of the billing and sign-in resources, through the data API engine as a signed-in user.
 */
let db: Database;
let drop: () => Promise<void>;
let make: Factories;
beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
  make = createFactories(db.orm);
});
afterAll(() => drop());

type Row = Record<string, unknown>;

/** One data API request as `as` (a user, with the permissions every user holds, and those of its global roles). */
async function request(as: User, method: string, url: string, body?: unknown, globalRoles: string[] = []) {
  return handleODataRequest({
    db,
    model,
    permissions: createPermissions({ model, permissions: permissionsForUser(globalRoles), actorId: as.actor }),
    actorId: as.actor,
    method,
    url,
    body,
  });
}

async function get(as: User, url: string): Promise<Row[]> {
  const response = await request(as, "GET", url);
  return (response.body as { d: Row[] }).d;
}

const planId = async (code: string) => {
  const [row] = await db.orm.select({ id: plan.id }).from(plan).where(eq(plan.billing_code, code));
  if (!row) throw new Error(`no plan ${code}`);
  return row.id;
};

describe("the seeded plan catalogue", () => {
  it("is edited by platform administrators, and only read by everyone else", async () => {
    const someone = await make.user();
    const pilot = await planId("pilot-v2");
    await expect(request(someone, "PATCH", `/plan(${pilot})`, { monthly_price: 1 })).rejects.toMatchObject({
      statusCode: 401,
    });
    const staff = await make.user();
    const patched = await request(staff, "PATCH", `/plan(${pilot})`, { title: "Pilot+" }, ["balena_admin"]);
    expect(patched.status).toBe(200);
    expect((await get(someone, `/plan(${pilot})?$select=title`))[0]?.title).toBe("Pilot+");
    await request(staff, "PATCH", `/plan(${pilot})`, { title: "Pilot" }, ["balena_admin"]);
  });

  it("has the free plan with a 10-device allowance and community support only", async () => {
    const someone = await make.user();
    const [free] = await get(
      someone,
      "/plan?$filter=billing_code eq 'free'&$expand=plan_feature($select=quantity;$expand=feature($select=slug))",
    );
    expect(free).toMatchObject({ title: "Free", monthly_price: 0, annual_price: 0, can_self_serve: true });
    const included = Object.fromEntries(
      ((free?.plan_feature ?? []) as { quantity: number; feature: { slug: string }[] }[]).map((f) => [
        f.feature[0]?.slug,
        f.quantity,
      ]),
    );
    expect(included["device:microservices"]).toBe(10);
    const [tier] = await get(
      someone,
      "/support_tier?$filter=is_of__support_feature/any(sf:sf/feature/any(f:f/plan_feature/any(pf:pf/plan/any(p:p/billing_code eq 'free'))))",
    );
    expect(tier).toMatchObject({ slug: "community", includes_private_support: false });
  });

  it("offers paid self-serve tiers in cents, cheapest first, each with private support", async () => {
    const someone = await make.user();
    const paid = await get(
      someone,
      "/plan?$filter=can_self_serve and not is_legacy and monthly_price gt 0&$orderby=monthly_price asc&$select=billing_code,monthly_price,annual_price",
    );
    expect(paid.map((p) => p.billing_code)).toEqual(["prototype-v2", "pilot-v2", "production-v2"]);
    for (const p of paid) {
      expect(p.annual_price as number).toBeGreaterThan(p.monthly_price as number);
      const tiers = await get(
        someone,
        `/support_tier?$filter=is_of__support_feature/any(sf:sf/feature/any(f:f/plan_feature/any(pf:pf/plan/any(x:x/billing_code eq '${String(p.billing_code)}'))))`,
      );
      expect(tiers.map((t) => t.includes_private_support)).toEqual([true]);
    }
    const [enterprise] = await get(someone, "/plan(billing_code='enterprise-v2')?$select=can_self_serve");
    expect(enterprise).toEqual({ can_self_serve: false });
  });
});

describe("billing data", () => {
  it("is read by an organization's administrators only, never another organization's", async () => {
    const [alice, bob, member] = [await make.user(), await make.user(), await make.user()];
    const aliceOrg = await make.organization({ admins: [alice], members: [member] });
    const bobOrg = await make.organization({ admins: [bob] });
    const [mine] = await db.orm
      .insert(subscription)
      .values({ is_for__organization: aliceOrg.id, is_for__plan: await planId("pilot-v2") })
      .returning();
    const [theirs] = await db.orm
      .insert(subscription)
      .values({ is_for__organization: bobOrg.id, is_for__plan: await planId("production-v2"), billing_cycle: "annual" })
      .returning();

    const seen = await get(alice, "/subscription?$select=id,is_active&$expand=is_for__plan($select=billing_code)");
    expect(seen).toEqual([{ id: mine?.id, is_active: true, is_for__plan: [{ billing_code: "pilot-v2" }] }]);
    expect(await get(alice, `/subscription(${theirs?.id})`)).toEqual([]);
    expect(await get(alice, `/subscription?$filter=is_for__organization eq ${bobOrg.id}`)).toEqual([]);
    // Not through the public plan either.
    const [production] = await get(alice, "/plan(billing_code='production-v2')?$expand=subscription/$count");
    expect(production?.subscription).toBe(0);
    // A plain member of Alice's organization sees no plan data of it (spec 1 §6).
    expect(await get(member, "/subscription")).toEqual([]);
    expect(await get(bob, "/subscription?$select=id")).toEqual([{ id: theirs?.id }]);
  });

  it("refuses writes to subscriptions", async () => {
    const alice = await make.user();
    const org = await make.organization({ admins: [alice] });
    await expect(
      request(alice, "POST", "/subscription", { is_for__organization: org.id, is_for__plan: await planId("free") }),
    ).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("lets administrators set credit notifications of their organizations only", async () => {
    const [alice, bob] = [await make.user(), await make.user()];
    const aliceOrg = await make.organization({ admins: [alice] });
    const bobOrg = await make.organization({ admins: [bob] });
    const [credits] = await db.orm
      .select({ id: feature.id })
      .from(feature)
      .where(eq(feature.slug, "device:microservices"));
    const body = (organization: number) => ({
      organization,
      owns_credit_notification_for__feature: credits?.id,
      is_sent_when_below__threshold: 20,
    });
    expect((await request(alice, "POST", "/organization_credit_notification", body(aliceOrg.id))).status).toBe(201);
    await expect(request(alice, "POST", "/organization_credit_notification", body(bobOrg.id))).rejects.toMatchObject(
      // Bob's organization is not one Alice can see: answered as a missing one (401, as balena).
      { code: "unauthorized", message: expect.stringMatching(/does not refer to an existing row/) },
    );
  });
});

describe("sign-in resources", () => {
  it("show users their own profile and recovery codes, never the code", async () => {
    const [alice, bob] = [await make.user(), await make.user()];
    await db.orm.insert(recovery_two_factor).values([
      { belongs_to__user: alice.id, code_hash: "hash-a" },
      { belongs_to__user: bob.id, code_hash: "hash-b" },
    ]);
    const profiles = await get(alice, "/user_profile?$select=id,email,has_password_set");
    expect(profiles).toEqual([{ id: alice.id, email: alice.email, has_password_set: true }]);
    const codes = await get(alice, "/recovery_two_factor?$select=belongs_to__user,used_timestamp");
    expect(codes).toEqual([{ belongs_to__user: { __id: alice.id }, used_timestamp: null }]);
    await expect(request(alice, "GET", "/recovery_two_factor?$select=code_hash")).rejects.toMatchObject({
      code: "bad_request",
    });
  });

  it("let administrators manage their identity providers, and nobody add an organization to another's", async () => {
    const [alice, bob] = [await make.user(), await make.user()];
    const aliceOrg = await make.organization({ admins: [alice] });
    const aliceOther = await make.organization({ admins: [alice] });
    const bobOrg = await make.organization({ admins: [bob] });
    const [idp] = await db.orm
      .insert(identity_provider)
      .values({
        sso_identifier: "acme-sso",
        entry_point: "https://idp.example.com/sso",
        issuer: "acme",
        certificate: "-",
      })
      .returning();
    if (!idp) throw new Error("no identity provider");
    await db.orm
      .insert(identity_provider_membership)
      .values({ organization: aliceOrg.id, is_authorized_by__identity_provider: idp.id });

    expect(await get(alice, "/identity_provider?$select=sso_identifier")).toEqual([{ sso_identifier: "acme-sso" }]);
    expect(await get(bob, "/identity_provider")).toEqual([]);
    const add = (as: User, organization: number) =>
      request(as, "POST", "/identity_provider_membership", {
        organization,
        is_authorized_by__identity_provider: idp.id,
      });
    await expect(add(bob, bobOrg.id)).rejects.toMatchObject({
      code: "unauthorized",
      message: expect.stringMatching(/does not refer to an existing row/),
    });
    expect((await add(alice, aliceOther.id)).status).toBe(201);
    // Nor a team of someone else's organization.
    const bobTeam = await make.team(bobOrg, { members: [bob] });
    const [membership] = await get(alice, `/identity_provider_membership?$filter=organization eq ${aliceOrg.id}`);
    await expect(
      request(alice, "PATCH", `/identity_provider_membership(${String(membership?.id)})`, {
        grants_access_to__team: bobTeam.id,
      }),
    ).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringMatching(/does not refer to an existing row/),
    });
    // A provider left without organizations cannot be claimed through the data API.
    const [orphan] = await db.orm
      .insert(identity_provider)
      .values({ sso_identifier: "orphan", entry_point: "https://idp.example.com/sso", issuer: "x", certificate: "-" })
      .returning();
    await expect(
      request(bob, "POST", "/identity_provider_membership", {
        organization: bobOrg.id,
        is_authorized_by__identity_provider: orphan?.id,
      }),
    ).rejects.toMatchObject({
      code: "unauthorized",
      message: expect.stringMatching(/does not refer to an existing row/),
    });
    await expect(
      request(bob, "PATCH", `/identity_provider(${idp.id})`, { certificate: "mine now" }),
    ).resolves.toMatchObject({ status: 200 });
    const [unchanged] = await db.orm.select().from(identity_provider).where(eq(identity_provider.id, idp.id));
    expect(unchanged?.certificate).toBe("-");
    // Anyone may try to create one; the plan and form rules are the hooks' (test/saml.test.ts).
    await expect(request(alice, "POST", "/identity_provider", { sso_identifier: "x-sso" })).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringMatching(/"entry_point" is required/),
    });
  });
});
