import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODE_HEADER } from "../src/lib/error-handler.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { client } from "./support/accounts.ts";
import { startDnsServer, type TestDnsServer } from "./support/dns-server.ts";
import { domainsApi } from "./support/domains.ts";
import { type AnswerOptions, addSamlProvider, startSamlIdp, type TestSamlIdp } from "./support/saml-idp.ts";

// Enterprise sign-in against a real SAML identity provider running in this process (samlify as
// the IdP, node-saml in the server): signatures, audience, times, replays, account merging and
// the organization boundary of a provider. Organization A verified acme.test through the test
// DNS server, so the provider signs in addresses there (docs/identity.md "Verified domains").

let t: TestApp;
let api: ReturnType<typeof client>;
let idp: TestSamlIdp;
let otherIdp: TestSamlIdp;
let dns: TestDnsServer;
const DASHBOARD = "http://dashboard.test";

type Admin = Awaited<ReturnType<TestApp["factories"]["user"]>>;
let alice: Admin;
let orgA: { id: number; handle: string };
let orgA2: { id: number; handle: string };
let teamA: { id: number };

beforeAll(async () => {
  dns = await startDnsServer();
  t = await createTestApp({ FLOTILLA_PUBLIC_URL: DASHBOARD, FLOTILLA_DNS_SERVERS: dns.server });
  api = client(t);
  [idp, otherIdp] = await Promise.all([startSamlIdp({ name: "Acme" }), startSamlIdp({ name: "Other" })]);
  alice = await t.factories.user({ email: "alice@acme.test" });
  orgA = await t.factories.organization({ admins: [alice.user], plan: "enterprise-v2" });
  orgA2 = await t.factories.organization({ admins: [alice.user], plan: "production-v2" });
  teamA = await t.factories.team(orgA, { members: [] });
  await addSamlProvider(t, alice.token, "acme", idp, [orgA.id, orgA2.id], teamA.id);
  await domainsApi(t).verifyDomain(alice.token, orgA.id, "acme.test", dns);
});
afterAll(async () => {
  await t.close();
  await idp.close();
  await otherIdp.close();
  await dns.close();
});

/** The browser's way to the IdP: GET /auth/saml/{sso} answers with a redirect carrying a signed AuthnRequest. */
async function startSignIn(sso: string): Promise<string> {
  const response = await fetch(`${t.url}/auth/saml/${sso}`, { redirect: "manual" });
  expect(response.status).toBe(302);
  return response.headers.get("location") ?? "";
}

/** Posts an IdP answer to the ACS as the browser would; returns where the browser is sent. */
async function postAnswer(sso: string, samlResponse: string): Promise<URL> {
  const response = await fetch(`${t.url}/auth/saml/${sso}/callback`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ SAMLResponse: samlResponse }),
    redirect: "manual",
  });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location") ?? "");
}

async function signIn(sso: string, provider: TestSamlIdp, options: AnswerOptions): Promise<URL> {
  const { samlResponse } = await provider.answer(await startSignIn(sso), options);
  return postAnswer(sso, samlResponse);
}

const finalize = (code: string | null, jwt?: string) =>
  api.post("/auth/saml/finalize", { code, ...(jwt ? { jwt } : {}) });

const orgsOf = async (email: string) =>
  (
    await t.db.query<{ id: number }>(
      `SELECT m.is_member_of__organization AS id FROM "organization_membership" m JOIN "user" u ON u.id = m."user"
        WHERE lower(u.email) = lower($1) ORDER BY 1`,
      [email],
    )
  ).rows.map((r) => Number(r.id));

describe("SAML sign-in", () => {
  it("sends the browser to the IdP with a signed AuthnRequest, and unknown identifiers back to /saml", async () => {
    const location = new URL(await startSignIn("acme"));
    expect(`${location.origin}${location.pathname}`).toBe(idp.ssoUrl);
    expect(location.searchParams.get("SAMLRequest")).toBeTruthy();
    expect(location.searchParams.get("SigAlg")).toContain("rsa-sha256");
    expect(location.searchParams.get("Signature")).toBeTruthy();
    const unknown = new URL(await startSignIn("nobody-here"));
    expect(unknown.href).toBe(`${DASHBOARD}/saml?saml_error=unknown_sso_identifier&sso=nobody-here`);
  });

  it("says of a provider whose organizations lost SAML with their plan that it is not in the plan, not unknown", async () => {
    const owner = await t.factories.user();
    const org = await t.factories.organization({ admins: [owner.user], plan: "production-v2" });
    await addSamlProvider(t, owner.token, "lapsed", otherIdp, [org.id]);
    expect(new URL(await startSignIn("lapsed")).origin).toBe(new URL(otherIdp.ssoUrl).origin);
    await t.db.query('UPDATE "subscription" SET ends_on__date = starts_on__date WHERE is_for__organization = $1', [
      org.id,
    ]);
    expect(await startSignIn("lapsed")).toBe(`${DASHBOARD}/saml?saml_error=saml_provider_not_in_plan&sso=lapsed`);
  });

  it("creates the user on first sign-in, in every organization of the provider and its team", async () => {
    const landed = await signIn("acme", idp, { email: "new.user@acme.test", displayName: "New User" });
    expect(landed.pathname).toBe("/saml/callback/signon");
    const token = await finalize(landed.searchParams.get("code"));
    expect(token.status, token.text).toBe(200);
    const whoami = await api.get("/actor/v1/whoami", token.text);
    expect(whoami.json).toMatchObject({ email: "new.user@acme.test" });
    const orgs = await orgsOf("new.user@acme.test");
    expect(orgs).toEqual(expect.arrayContaining([orgA.id, orgA2.id]));
    expect(orgs).toHaveLength(3); // and a personal organization
    const { rows: team } = await t.db.query(
      `SELECT 1 FROM "team_membership" tm JOIN "user" u ON u.id = tm."user" WHERE u.email = $1 AND tm.is_member_of__team = $2`,
      ["new.user@acme.test", teamA.id],
    );
    expect(team).toHaveLength(1);
    // A SAML-only account has no password and cannot create API keys (spec 1 §6.2).
    const key = await api.post("/api-key/user/full", { name: "ci", expiryDate: null }, token.text);
    expect(key.status).toBe(403);
    // The code is spent.
    expect((await finalize(landed.searchParams.get("code"))).headers.get(ERROR_CODE_HEADER)).toBe("saml_login_failed");
    // The next sign-in finds the same account.
    const again = await signIn("acme", idp, { email: "new.user@acme.test" });
    const second = await finalize(again.searchParams.get("code"));
    expect((await api.get("/actor/v1/whoami", second.text)).json.id).toBe(whoami.json.id);
  });

  it.each<[string, Partial<AnswerOptions>]>([
    ["an unsigned assertion", { unsigned: true }],
    ["another audience", { audience: "https://someone-else.test/sp" }],
    ["another recipient", { recipient: "https://someone-else.test/acs" }],
    ["an expired assertion", { notBeforeMs: -20 * 60_000, notOnOrAfterMs: -10 * 60_000 }],
    ["an assertion not yet valid", { notBeforeMs: 10 * 60_000, notOnOrAfterMs: 20 * 60_000 }],
    ["an answer to a request never sent", { inResponseTo: "_never-sent" }],
  ])("refuses %s", async (_name, tweak) => {
    const landed = await signIn("acme", idp, { email: "refused@acme.test", ...tweak });
    expect(landed.href).toBe(`${DASHBOARD}/login?saml_error=saml_login_failed`);
    expect(await orgsOf("refused@acme.test")).toEqual([]);
  });

  it("refuses an answer signed by another IdP's key, and a replayed answer", async () => {
    const ssoUrl = await startSignIn("acme");
    otherIdp.trust(await (await fetch(`${t.url}/auth/saml/acme/metadata`)).text());
    const forged = await otherIdp.answer(ssoUrl, { email: "forged@acme.test" });
    expect((await postAnswer("acme", forged.samlResponse)).searchParams.get("saml_error")).toBe("saml_login_failed");
    const { samlResponse } = await idp.answer(await startSignIn("acme"), { email: "replay@acme.test" });
    expect((await postAnswer("acme", samlResponse)).pathname).toBe("/saml/callback/signon");
    const replayed = await postAnswer("acme", samlResponse);
    expect(replayed.href).toBe(`${DASHBOARD}/login?saml_error=saml_login_failed`);
    expect(await orgsOf("forged@acme.test")).toEqual([]);
    // Both refusals are in the audit log, with the provider and the reason.
    const { rows } = await t.db.query<{ details: unknown }>(
      `SELECT details FROM "audit_event" WHERE action = 'sign_in.failed' AND details->>'sso' = 'acme' ORDER BY id DESC LIMIT 2`,
    );
    expect(rows).toEqual([
      { details: { method: "saml", sso: "acme", reason: "saml_login_failed" } },
      { details: { method: "saml", sso: "acme", reason: "saml_login_failed" } },
    ]);
  });

  it("links an existing account only after its owner signs in, with the same email (case-insensitive)", async () => {
    const bob = await t.factories.user({ email: "Bob@Acme.test" });
    const carol = await t.factories.user({ email: "carol@acme.test" });
    const landed = await signIn("acme", idp, { email: "bob@acme.test" });
    expect(landed.pathname).toBe("/saml/callback/merge");
    expect(landed.searchParams.get("shouldMergeWith")).toBe("bob@acme.test");
    const code = landed.searchParams.get("code");
    // Not signed in: nothing is linked, and the code stays usable for the owner.
    expect((await finalize(code)).headers.get(ERROR_CODE_HEADER)).toBe("saml_require_login");
    const again = await signIn("acme", idp, { email: "bob@acme.test" });
    const mismatch = await finalize(again.searchParams.get("code"), carol.token);
    expect(mismatch.headers.get(ERROR_CODE_HEADER)).toBe("saml_email_mismatch");
    expect(await orgsOf("carol@acme.test")).not.toContain(orgA.id);
    const third = await signIn("acme", idp, { email: "bob@acme.test" });
    const merged = await finalize(third.searchParams.get("code"), bob.token);
    expect(merged.status, merged.text).toBe(200);
    expect((await api.get("/actor/v1/whoami", merged.text)).json.id).toBe(bob.user.actor);
    expect(await orgsOf("bob@acme.test")).toEqual(expect.arrayContaining([orgA.id, orgA2.id]));
    // From now on the IdP signs Bob in directly.
    const direct = await signIn("acme", idp, { email: "bob@acme.test" });
    expect(direct.pathname).toBe("/saml/callback/signon");
  });

  it("never signs anyone into an organization that did not configure the provider", async () => {
    const mallory = await t.factories.user({ email: "mallory@evil.test" });
    const dave = await t.factories.user({ email: "dave@bee.test" });
    const orgB = await t.factories.organization({ admins: [dave.user], plan: "enterprise-v2" });
    const evilOrg = await t.factories.organization({ admins: [mallory.user], plan: "enterprise-v2" });
    const { rows } = await t.db.query<{ id: number }>(
      `SELECT id FROM "identity_provider" WHERE sso_identifier = 'acme'`,
    );
    const acme = Number(rows[0]?.id);
    // Alice cannot attach organization B to her provider, nor Mallory her organization to Alice's.
    const attachB = await api.post(
      "/v7/identity_provider_membership",
      { organization: orgB.id, is_authorized_by__identity_provider: acme },
      alice.token,
    );
    expect(attachB.status).toBeGreaterThanOrEqual(400);
    const attachEvil = await api.post(
      "/v7/identity_provider_membership",
      { organization: evilOrg.id, is_authorized_by__identity_provider: acme },
      mallory.token,
    );
    expect(attachEvil.status).toBeGreaterThanOrEqual(400);
    // Mallory's own provider asserting Dave's email is refused: her organization has not verified
    // bee.test (security review 3). Nothing is created or linked, and the refusal is audited.
    await addSamlProvider(t, mallory.token, "evil", otherIdp, [evilOrg.id]);
    const landed = await signIn("evil", otherIdp, { email: "dave@bee.test" });
    expect(landed.href).toBe(`${DASHBOARD}/login?saml_error=saml_domain_not_verified&domain=bee.test`);
    expect(await orgsOf("dave@bee.test")).toEqual([orgB.id]);
    const newcomer = await signIn("evil", otherIdp, { email: "someone@bee.test" });
    expect(newcomer.searchParams.get("saml_error")).toBe("saml_domain_not_verified");
    expect(await orgsOf("someone@bee.test")).toEqual([]);
    // And an answer of Acme's IdP posted to Mallory's provider does not pass its certificate.
    const { samlResponse } = await idp.answer(await startSignIn("evil"), { email: "x@evil.test" });
    expect((await postAnswer("evil", samlResponse)).searchParams.get("saml_error")).toBe("saml_login_failed");
  });
});

describe("identity provider administration", () => {
  it("checks the form's rules and stores the certificate as PEM with 64-character lines", async () => {
    const post = (body: Record<string, unknown>) => api.post("/v7/identity_provider", body, alice.token);
    const valid = {
      sso_identifier: "rules",
      entry_point: idp.ssoUrl,
      issuer: idp.entityId,
      certificate: idp.certificatePem,
    };
    expect((await post({ ...valid, sso_identifier: "ab" })).text).toContain("Must be at least 3 characters");
    expect((await post({ ...valid, sso_identifier: "Acme Corp" })).text).toContain(
      "Your entry contains invalid characters",
    );
    expect((await post({ ...valid, entry_point: "not a url" })).text).toContain("Invalid URL");
    const twice = `${idp.certificatePem}\n${idp.certificatePem}`;
    expect((await post({ ...valid, certificate: twice })).headers.get(ERROR_CODE_HEADER)).toBe(
      "invalid_certificate_format",
    );
    expect(
      (
        await post({ ...valid, certificate: "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----" })
      ).headers.get(ERROR_CODE_HEADER),
    ).toBe("invalid_certificate_format");
    const body = idp.certificatePem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
    const created = await post({ ...valid, certificate: body });
    expect(created.status, created.text).toBe(201);
    const { rows } = await t.db.query<{ certificate: string }>(
      `SELECT certificate FROM "identity_provider" WHERE id = $1`,
      [created.json.id],
    );
    const lines = rows[0]?.certificate.split("\n") ?? [];
    expect(lines[0]).toBe("-----BEGIN CERTIFICATE-----");
    expect(lines.at(-1)).toBe("-----END CERTIFICATE-----");
    expect(lines.slice(1, -2).every((line) => line.length === 64)).toBe(true);
  });

  it("needs a plan with SAML, keeps one organization, and is not removed while SAML accounts exist", async () => {
    const freeAdmin = await t.factories.user();
    await t.factories.organization({ admins: [freeAdmin.user] });
    const refused = await api.post(
      "/v7/identity_provider",
      { sso_identifier: "free-one", entry_point: idp.ssoUrl, issuer: idp.entityId, certificate: idp.certificatePem },
      freeAdmin.token,
    );
    expect(refused.headers.get(ERROR_CODE_HEADER)).toBe("saml_not_in_plan");
    const { rows } = await t.db.query<{ id: number }>(
      `SELECT id FROM "identity_provider" WHERE sso_identifier = 'acme'`,
    );
    const acme = Number(rows[0]?.id);
    const memberships = await api.get(
      `/v7/identity_provider_membership?$filter=is_authorized_by__identity_provider eq ${acme}`,
      alice.token,
    );
    const ids = (memberships.json.d as { id: number }[]).map((m) => m.id);
    expect(ids).toHaveLength(2);
    expect((await api.del(`/v7/identity_provider_membership(${ids[1]})`, alice.token)).status).toBe(200);
    const last = await api.del(`/v7/identity_provider_membership(${ids[0]})`, alice.token);
    expect(last.headers.get(ERROR_CODE_HEADER)).toBe("idp_must_have_at_least_one_org");
    const removal = await api.del(`/v7/identity_provider(${acme})`, alice.token);
    expect(removal.headers.get(ERROR_CODE_HEADER)).toBe("idp_has_saml_accounts");
    // Revoking the SAML accounts first (spec 3 §5) lets it go.
    expect(
      (await api.del(`/v7/saml_account?$filter=was_generated_by__identity_provider eq ${acme}`, alice.token)).status,
    ).toBe(200);
    expect((await api.del(`/v7/identity_provider(${acme})`, alice.token)).status).toBe(200);
  });
});
