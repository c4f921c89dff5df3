import { errorCatalogue, formatErrorText } from "@flotilla/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepOrphanProviders } from "../src/features/identity/hooks.ts";
import { ERROR_CODE_HEADER } from "../src/lib/error-handler.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { client } from "./support/accounts.ts";
import { startDnsServer, type TestDnsServer } from "./support/dns-server.ts";
import { type DomainAnswer, domainsApi } from "./support/domains.ts";
import { linkIn, type MailServer, startMailServer } from "./support/mail.ts";
import { type AnswerOptions, addSamlProvider, startSamlIdp, type TestSamlIdp } from "./support/saml-idp.ts";

// Security review 3 (issue #33): an identity provider signs in only addresses at domains its
// organizations verified through DNS; a mail takeover ends the links of providers that may not
// vouch for the address; a provider left without an organization is removed after an hour and
// its creator may edit or remove it meanwhile. Real SAML IdPs, a real DNS server on 127.0.0.1
// and a real SMTP server, all in this process.

let t: TestApp;
let api: ReturnType<typeof client>;
let domains: ReturnType<typeof domainsApi>;
let dns: TestDnsServer;
let mail: MailServer;
let corpIdp: TestSamlIdp;
let rogueIdp: TestSamlIdp;
const DASHBOARD = "https://console.example.com";

type Person = Awaited<ReturnType<TestApp["factories"]["user"]>>;
let admin: Person;
let member: Person;
let outsider: Person;
let mallory: Person;
let corp: { id: number };
let rogueOrg: { id: number };

beforeAll(async () => {
  [dns, mail, corpIdp, rogueIdp] = await Promise.all([
    startDnsServer(),
    startMailServer(),
    startSamlIdp({ name: "Corp" }),
    startSamlIdp({ name: "Rogue" }),
  ]);
  t = await createTestApp({ FLOTILLA_PUBLIC_URL: DASHBOARD, FLOTILLA_DNS_SERVERS: dns.server, SMTP_URL: mail.url });
  api = client(t);
  domains = domainsApi(t);
  admin = await t.factories.user({ email: "admin@corp.test" });
  member = await t.factories.user({ email: "member@corp.test" });
  outsider = await t.factories.user({ email: "outsider@elsewhere.test" });
  mallory = await t.factories.user({ email: "mallory@rogue.test" });
  corp = await t.factories.organization({ admins: [admin.user], members: [member.user], plan: "enterprise-v2" });
  rogueOrg = await t.factories.organization({ admins: [mallory.user], plan: "enterprise-v2" });
  await addSamlProvider(t, admin.token, "corp", corpIdp, [corp.id]);
  await domains.verifyDomain(admin.token, corp.id, "corp.test", dns);
});
afterAll(async () => {
  await t.close();
  await Promise.all([dns.close(), mail.close(), corpIdp.close(), rogueIdp.close()]);
});

/** The browser's round trip: GET /auth/saml/{sso}, the IdP's answer posted to the ACS; where it lands. */
async function signIn(sso: string, provider: TestSamlIdp, options: AnswerOptions): Promise<URL> {
  const start = await fetch(`${t.url}/auth/saml/${sso}`, { redirect: "manual" });
  expect(start.status).toBe(302);
  const { samlResponse } = await provider.answer(start.headers.get("location") ?? "", options);
  const response = await fetch(`${t.url}/auth/saml/${sso}/callback`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ SAMLResponse: samlResponse }),
    redirect: "manual",
  });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location") ?? "");
}

/** Signs in through the provider up to a session token (the landing must be the sign-on page). */
async function sessionThrough(sso: string, provider: TestSamlIdp, options: AnswerOptions): Promise<string> {
  const landed = await signIn(sso, provider, options);
  expect(landed.pathname, landed.href).toBe("/saml/callback/signon");
  const finalized = await api.post("/auth/saml/finalize", { code: landed.searchParams.get("code") });
  expect(finalized.status, finalized.text).toBe(200);
  return finalized.text;
}

const refusedFor = (domain: string) =>
  `${DASHBOARD}/login?${new URLSearchParams({ saml_error: "saml_domain_not_verified", domain })}`;

const linksOf = async (email: string) =>
  (
    await t.db.query<{ provider: number }>(
      `SELECT s.was_generated_by__identity_provider AS provider FROM "saml_account" s JOIN "user" u ON u.id = s.belongs_to__user
        WHERE lower(u.email) = lower($1)`,
      [email],
    )
  ).rows.map((r) => Number(r.provider));

const audit = async (action: string) =>
  (
    await t.db.query<{ organization: number | null; target_type: string; details: Record<string, unknown> }>(
      `SELECT organization, target_type, details FROM "audit_event" WHERE action = $1 ORDER BY id`,
      [action],
    )
  ).rows;

describe("domain verification through DNS", () => {
  it("verifies a domain once its TXT record is published; otherwise it stays pending and says why", async () => {
    const added = await domains.add(admin.token, corp.id, " Example.ORG. ");
    expect(added.status, added.text).toBe(201);
    const row = added.json as unknown as DomainAnswer;
    expect(row).toMatchObject({ domain: "example.org", state: "pending", last_checked_at: null, verified_at: null });
    expect(row.verification_record).toMatch(/^flotilla-verification=[0-9a-f]{32}$/);
    const check = async () => (await domains.verify(admin.token, corp.id, row.id)).json as unknown as DomainAnswer;

    // Not in DNS at all, no TXT record, other records, another token: pending, with the reason.
    expect(await check()).toMatchObject({
      state: "pending",
      last_check_error: "example.org was not found in DNS. Check the spelling of the domain.",
    });
    dns.setTxt("example.org", []);
    expect(await check()).toMatchObject({
      state: "pending",
      last_check_error: `No TXT record was found at example.org. Publish ${row.verification_record} there and check again.`,
    });
    dns.setTxt("example.org", ["v=spf1 -all"]);
    expect((await check()).last_check_error).toBe(
      `The TXT records at example.org do not include ${row.verification_record}. Publish it there and check again.`,
    );
    dns.setTxt("example.org", ["flotilla-verification=00000000000000000000000000000000"]);
    const wrong = await check();
    expect(wrong).toMatchObject({ state: "pending", verified_at: null });
    expect(wrong.last_check_error).toBe(
      `The TXT record at example.org has another verification token. Publish ${row.verification_record} there and check again.`,
    );
    expect(Date.parse(wrong.last_checked_at ?? "")).toBeGreaterThan(Date.now() - 60_000);
    // The server asked the DNS server named by FLOTILLA_DNS_SERVERS.
    expect(dns.queries).toContain("TXT example.org");

    // Published (among other records): verified.
    dns.setTxt("example.org", ["v=spf1 -all", row.verification_record]);
    const verified = await check();
    expect(verified).toMatchObject({ state: "verified", last_check_error: null });
    expect(verified.verified_at).not.toBeNull();
    const listed = await domains.list(admin.token, corp.id);
    expect((listed.json.domains as DomainAnswer[]).find((d) => d.id === row.id)?.state).toBe("verified");

    // DNS that does not answer changes nothing; a record that is gone fails a verified domain.
    dns.setFailing("example.org");
    expect(await check()).toMatchObject({
      state: "verified",
      last_check_error: "The DNS look-up of example.org failed (ESERVFAIL). Please try again later.",
    });
    dns.setFailing("example.org", false);
    dns.setTxt("example.org", []);
    expect((await check()).state).toBe("failed");
    dns.setTxt("example.org", [row.verification_record]);
    expect((await check()).state).toBe("verified");

    expect((await domains.remove(admin.token, corp.id, row.id)).status).toBe(204);
    expect((listed.json.domains as DomainAnswer[]).length - 1).toBe(
      ((await domains.list(admin.token, corp.id)).json.domains as DomainAnswer[]).length,
    );
    // Added, verified, failed, verified again, removed: each in the organization's audit log.
    const entries = async (action: string) =>
      (await audit(action))
        .filter((e) => e.details.domain === "example.org")
        .map((e) => [e.organization, e.target_type]);
    expect(await entries("domain.added")).toEqual([[corp.id, "domain"]]);
    expect(await entries("domain.verified")).toEqual([
      [corp.id, "domain"],
      [corp.id, "domain"],
    ]);
    expect(await entries("domain.verification_failed")).toEqual([[corp.id, "domain"]]);
    expect(await entries("domain.removed")).toEqual([[corp.id, "domain"]]);
  });

  it("answers bad input with a clear error, never a validator's text", async () => {
    const cases: Array<[unknown, number, string]> = [
      ["", 400, "domain: This field is required"],
      ["https://example.com/login", 400, "domain: Enter a domain name such as example.com, without https:// or a path"],
      ["ann@example.com", 400, "domain: Enter the domain only, without a name and @ (e.g. example.com)"],
      ["localhost", 400, "domain: Enter a full domain name such as example.com"],
      ["192.168.1.20", 400, "domain: Enter a domain name, not an IP address"],
      ["exa mple.com", 400, "domain: Enter a domain name such as example.com, without https:// or a path"],
      ["bad_name.example.com", 400, "domain: Your entry contains invalid characters"],
      ["x".repeat(400), 400, "domain: A domain name has at most 253 characters"],
      [42, 400, "domain: must be a domain name such as example.com"],
      [{ name: "example.com" }, 400, "domain: must be a domain name such as example.com"],
      [null, 400, "domain: must be a domain name such as example.com"],
    ];
    for (const [domain, status, message] of cases) {
      const response = await domains.add(admin.token, corp.id, domain);
      expect([response.status, response.json?.message], JSON.stringify(domain)).toEqual([status, message]);
    }
    const missing = await api.post(`/identity/v1/organizations/${corp.id}/domains`, {}, admin.token);
    expect(missing.json.message).toBe("domain: must be a domain name such as example.com");
    const notAnObject = await api.post(`/identity/v1/organizations/${corp.id}/domains`, "example.com", admin.token);
    expect([notAnObject.status, notAnObject.json.message]).toEqual([
      400,
      'The request body must be a JSON object such as {"domain": "example.com"}',
    ]);
    expect((await domains.add(admin.token, corp.id, "twice.example.net")).status).toBe(201);
    const twice = await domains.add(admin.token, corp.id, "TWICE.example.net");
    expect([twice.status, twice.json.message]).toEqual([
      409,
      "twice.example.net is already one of this organization's domains.",
    ]);
    const badOrg = await api.get("/identity/v1/organizations/abc/domains", admin.token);
    expect([badOrg.status, badOrg.json.message]).toEqual([400, "invalid id passed in url"]);
    const badId = await api.post(`/identity/v1/organizations/${corp.id}/domains/x/verify`, {}, admin.token);
    expect([badId.status, badId.json.message]).toEqual([400, "invalid domain id passed in url"]);
    const unknown = await domains.verify(admin.token, corp.id, 999_999);
    expect([unknown.status, unknown.json.message]).toEqual([404, "Domain not found"]);
    expect((await domains.remove(admin.token, corp.id, 999_999)).status).toBe(404);
    const otherOrg = await domains.list(admin.token, 999_999);
    expect([otherOrg.status, otherOrg.json.message]).toEqual([404, "Organization not found"]);
  });

  it("is for the organization's administrators only", async () => {
    const { json } = await domains.add(admin.token, corp.id, "admins-only.example.com");
    const id = Number(json.id);
    const forbidden = "Only the organization's administrators manage its domains.";
    for (const response of [
      await domains.list(member.token, corp.id),
      await domains.add(member.token, corp.id, "member.example.com"),
      await domains.verify(member.token, corp.id, id),
      await domains.remove(member.token, corp.id, id),
    ]) {
      expect([response.status, response.headers.get(ERROR_CODE_HEADER), response.json.message]).toEqual([
        403,
        "forbidden",
        forbidden,
      ]);
    }
    // Someone outside the organization does not learn it exists; nobody signed out gets in.
    expect((await domains.add(outsider.token, corp.id, "outsider.example.com")).status).toBe(404);
    expect((await domains.verify(outsider.token, corp.id, id)).status).toBe(404);
    expect((await api.get(`/identity/v1/organizations/${corp.id}/domains`)).status).toBe(401);
    const { rows } = await t.db.query(
      `SELECT domain FROM "organization_domain" WHERE domain IN ('member.example.com', 'outsider.example.com')`,
    );
    expect(rows).toEqual([]);
    expect((await domains.remove(admin.token, corp.id, id)).status).toBe(204);
  });
});

describe("SAML sign-in and verified domains", () => {
  it("signs in addresses at a verified domain and refuses the others, naming the domain", async () => {
    const token = await sessionThrough("corp", corpIdp, { email: "new.hire@corp.test" });
    expect((await api.get("/actor/v1/whoami", token)).json).toMatchObject({ email: "new.hire@corp.test" });

    // Another domain, and a subdomain of the verified one, are refused: nothing is created.
    for (const email of ["someone@other.test", "someone@eu.corp.test"]) {
      const landed = await signIn("corp", corpIdp, { email });
      expect(landed.href).toBe(refusedFor(email.split("@")[1] ?? ""));
      expect(await linksOf(email)).toEqual([]);
    }
    const { rows } = await t.db.query(
      `SELECT 1 FROM "user" WHERE email IN ('someone@other.test', 'someone@eu.corp.test')`,
    );
    expect(rows).toEqual([]);
    const failed = (await audit("sign_in.failed")).map((e) => e.details);
    expect(failed).toContainEqual({
      method: "saml",
      sso: "corp",
      reason: "saml_domain_not_verified",
      domain: "other.test",
    });
    // The catalogue's words, which the dashboard's login page shows for this code.
    expect(formatErrorText(errorCatalogue.saml_domain_not_verified.text, { domain: "other.test" })).toBe(
      "This identity provider may not sign in addresses at other.test: its organization has not verified that domain.",
    );
  });

  it("stops signing in accounts at a domain that is no longer verified, and the NameID of one cannot be reused", async () => {
    const legacy = await domains.verifyDomain(admin.token, corp.id, "legacy.test", dns);
    await sessionThrough("corp", corpIdp, { email: "old.timer@legacy.test", nameId: "emp-1001" });
    // The organization removes the domain: its accounts there are refused.
    expect((await domains.remove(admin.token, corp.id, legacy.id)).status).toBe(204);
    expect((await signIn("corp", corpIdp, { email: "old.timer@legacy.test", nameId: "emp-1001" })).href).toBe(
      refusedFor("legacy.test"),
    );
    // The same NameID with an address at a domain the provider may sign in does not reach that account.
    const reused = await signIn("corp", corpIdp, { email: "someone.else@corp.test", nameId: "emp-1001" });
    expect(reused.href).toBe(refusedFor("legacy.test"));
  });

  it("refuses a code whose domain was removed between the provider's answer and the finalize", async () => {
    const later = await domains.verifyDomain(admin.token, corp.id, "later.test", dns);
    const landed = await signIn("corp", corpIdp, { email: "quick@later.test" });
    expect(landed.pathname).toBe("/saml/callback/signon");
    expect((await domains.remove(admin.token, corp.id, later.id)).status).toBe(204);
    const finalized = await api.post("/auth/saml/finalize", { code: landed.searchParams.get("code") });
    expect([finalized.status, finalized.json]).toEqual([
      403,
      {
        code: "saml_domain_not_verified",
        domain: "later.test",
        message:
          "This identity provider may not sign in addresses at later.test: its organization has not verified that domain.",
      },
    ]);
  });
});

describe("taking an address back by mail", () => {
  async function completeReset(email: string, password: string) {
    const asked = await api.post(`/password-reset-path/${encodeURIComponent(email)}`, { "g-recaptcha-response": "" });
    expect(asked.status).toBe(200);
    const code =
      linkIn(await mail.next(email))
        .split("/")
        .pop() ?? "";
    const done = await api.post("/user/reset-password", { code, password });
    expect(done.status, done.text).toBe(200);
  }

  it("removes the link of a provider whose organization does not vouch for the address: it signs in no more", async () => {
    // Mallory's organization once showed victim.test's record (the domain changed hands since),
    // and her provider created the account of victim@victim.test.
    const rogue = await addSamlProvider(t, mallory.token, "rogue", rogueIdp, [rogueOrg.id]);
    const victimDomain = await domains.verifyDomain(mallory.token, rogueOrg.id, "victim.test", dns);
    await sessionThrough("rogue", rogueIdp, { email: "victim@victim.test", nameId: "rogue-victim" });
    expect(await linksOf("victim@victim.test")).toEqual([rogue]);
    // The domain's new owner replaced the records: a re-check fails the domain, and sign-ins stop.
    dns.setTxt("victim.test", ["v=spf1 include:mail.victim.test -all"]);
    expect((await domains.verify(mallory.token, rogueOrg.id, victimDomain.id)).json.state).toBe("failed");
    expect((await signIn("rogue", rogueIdp, { email: "victim@victim.test", nameId: "rogue-victim" })).href).toBe(
      refusedFor("victim.test"),
    );

    // The address's owner resets the password from the mailbox: the rogue link goes, audited.
    await completeReset("victim@victim.test", "the-owners-password");
    expect(await linksOf("victim@victim.test")).toEqual([]);
    expect((await audit("identity_provider.account_unlinked")).map((e) => [e.organization, e.details.domain])).toEqual([
      [rogueOrg.id, "victim.test"],
    ]);

    // Even with the record back, the provider reaches only the merge page, which needs the owner.
    dns.setTxt("victim.test", [victimDomain.verification_record]);
    expect((await domains.verify(mallory.token, rogueOrg.id, victimDomain.id)).json.state).toBe("verified");
    const again = await signIn("rogue", rogueIdp, { email: "victim@victim.test", nameId: "rogue-victim" });
    expect(again.pathname).toBe("/saml/callback/merge");
    const finalized = await api.post("/auth/saml/finalize", { code: again.searchParams.get("code") });
    expect(finalized.headers.get(ERROR_CODE_HEADER)).toBe("saml_require_login");
    expect(await linksOf("victim@victim.test")).toEqual([]);
    // The owner signs in with the new password.
    const login = await api.post("/login_", { username: "victim@victim.test", password: "the-owners-password" });
    expect(login.status).toBe(200);
  });

  it("keeps the link of a provider whose organization verified the domain", async () => {
    const token = await sessionThrough("corp", corpIdp, { email: "keeps@corp.test" });
    expect(token).toBeTruthy();
    const [corpProvider] = await linksOf("keeps@corp.test");
    await completeReset("keeps@corp.test", "a-password-of-mine");
    expect(await linksOf("keeps@corp.test")).toEqual([corpProvider]);
    expect((await signIn("corp", corpIdp, { email: "keeps@corp.test" })).pathname).toBe("/saml/callback/signon");
  });

  it("a completed email verification removes the links that do not vouch for the new address", async () => {
    const token = await sessionThrough("corp", corpIdp, { email: "mover@corp.test" });
    expect((await linksOf("mover@corp.test")).length).toBe(1);
    // The account's address changed to one at a domain Corp never verified, and awaits verification.
    await t.db.query(
      `UPDATE "user" SET email = 'mover@elsewhere.test', is_verified = false WHERE email = 'mover@corp.test'`,
    );
    expect((await api.post("/user/v1/verification-email", undefined, token)).status).toBe(200);
    const [, verificationToken, encodedEmail] =
      /\/user\/verify-email\/([^/]+)\/(.+)$/.exec(linkIn(await mail.next("mover@elsewhere.test"))) ?? [];
    const verified = await api.post("/user/v1/verify-email", {
      verificationToken,
      email: decodeURIComponent(encodedEmail ?? ""),
    });
    expect(verified.status, verified.text).toBe(200);
    expect(await linksOf("mover@elsewhere.test")).toEqual([]);
  });
});

describe("identity providers without an organization", () => {
  const createBare = async (token: string, sso: string) => {
    const created = await api.post(
      "/v7/identity_provider",
      {
        sso_identifier: sso,
        entry_point: corpIdp.ssoUrl,
        issuer: corpIdp.entityId,
        certificate: corpIdp.certificatePem,
      },
      token,
    );
    expect(created.status, created.text).toBe(201);
    return Number(created.json.id);
  };
  const entryPoint = async (id: number) =>
    (await t.db.query<{ entry_point: string }>(`SELECT entry_point FROM "identity_provider" WHERE id = $1`, [id]))
      .rows[0]?.entry_point;

  it("can be edited and removed by its creator, and by nobody else", async () => {
    const id = await createBare(admin.token, "half-done");
    // Another user's writes reach no row (the data API's filtered PATCH and DELETE change nothing).
    await api.patch(`/v7/identity_provider(${id})`, { entry_point: "https://mallory.test/sso" }, mallory.token);
    await api.del(`/v7/identity_provider(${id})`, mallory.token);
    expect(await entryPoint(id)).toBe(corpIdp.ssoUrl);
    expect((await api.get(`/v7/identity_provider(${id})`, mallory.token)).json.d).toEqual([]);
    const edited = await api.patch(
      `/v7/identity_provider(${id})`,
      { entry_point: "https://idp.corp.test/sso" },
      admin.token,
    );
    expect(edited.status, edited.text).toBe(200);
    expect(await entryPoint(id)).toBe("https://idp.corp.test/sso");
    const removed = await api.del(`/v7/identity_provider(${id})`, admin.token);
    expect(removed.status, removed.text).toBe(200);
    expect(await entryPoint(id)).toBeUndefined();
    // Its SSO identifier is free again.
    expect(await createBare(mallory.token, "half-done")).toBeGreaterThan(id);
  });

  it("is removed by the periodic sweep an hour after its creation, freeing its SSO identifier", async () => {
    const stale = await createBare(mallory.token, "squatted");
    const young = await createBare(mallory.token, "just-made");
    const staleWithOrg = await addSamlProvider(t, mallory.token, "rogue-two", rogueIdp, [rogueOrg.id]);
    const staleOrphanWithAccount = await createBare(mallory.token, "left-over");
    const user = await t.factories.user({ email: "left.over@rogue.test" });
    await t.db.query(
      `INSERT INTO "saml_account" (belongs_to__user, was_generated_by__identity_provider, remote_id) VALUES ($1, $2, 'x')`,
      [user.user.id, staleOrphanWithAccount],
    );
    await t.db.query(
      `UPDATE "identity_provider" SET created_at = now() - interval '61 minutes' WHERE id = ANY($1::int[])`,
      [[stale, staleWithOrg, staleOrphanWithAccount]],
    );
    // Two instances' sweeps at once: together they remove each orphan once, and nothing else.
    const removed = (await Promise.all([sweepOrphanProviders(t.db), sweepOrphanProviders(t.db)])).flat();
    expect(removed.sort((a, b) => a - b)).toEqual([stale, staleOrphanWithAccount].sort((a, b) => a - b));
    const { rows } = await t.db.query<{ id: number }>(
      `SELECT id FROM "identity_provider" WHERE id = ANY($1::int[]) ORDER BY id`,
      [[stale, young, staleWithOrg, staleOrphanWithAccount]],
    );
    expect(rows.map((r) => Number(r.id))).toEqual([young, staleWithOrg].sort((a, b) => a - b));
    expect(await sweepOrphanProviders(t.db)).toEqual([]);
    // The identifier is anyone's again.
    expect(await createBare(admin.token, "squatted")).toBeGreaterThan(stale);
  });
});
