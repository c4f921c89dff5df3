import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODE_HEADER } from "../src/lib/error-handler.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf, MINUTE, withClockOffset } from "./support/accounts.ts";
import { startOidcIdp, type TestOidcIdp } from "./support/oidc-idp.ts";

// Social sign-in against a real OpenID Connect provider (oidc-provider) in this process, and a
// fake GitHub (plain OAuth 2.0 and its REST API): PKCE, state, nonce, the dashboard's
// client_state, account resolution by verified email, replays.

const DASHBOARD = "http://dashboard.test";
const CLIENT_ID = "flotilla-test";
const CLIENT_SECRET = "flotilla-test-secret-0123456789";

let t: TestApp;
let idp: TestOidcIdp;
let github: FakeGitHub;

beforeAll(async () => {
  idp = await startOidcIdp({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [`${DASHBOARD}/auth/acme/callback`],
  });
  github = await startFakeGitHub();
  t = await createTestApp({
    FLOTILLA_PUBLIC_URL: DASHBOARD,
    FLOTILLA_OIDC_ACME_ISSUER: idp.issuer,
    FLOTILLA_OIDC_ACME_CLIENT_ID: CLIENT_ID,
    FLOTILLA_OIDC_ACME_CLIENT_SECRET: CLIENT_SECRET,
    FLOTILLA_OIDC_ACME_NAME: "Acme ID",
    FLOTILLA_OAUTH_GITHUB_CLIENT_ID: "gh-client",
    FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET: "gh-secret",
    FLOTILLA_OAUTH_GITHUB_URL: github.url,
    FLOTILLA_OAUTH_GITHUB_API_URL: `${github.url}/api`,
  });
});
afterAll(async () => {
  await t.close();
  await idp.close();
  await github.close();
});

const newClientState = () => crypto.randomBytes(16).toString("base64url");

/** The provider button: GET /auth/{provider} answers with a redirect to the provider. */
async function start(provider: string, clientState?: string): Promise<URL> {
  const query = clientState === undefined ? "" : `?client_state=${clientState}`;
  const response = await fetch(`${t.url}/auth/${provider}${query}`, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location") ?? "");
}

/** The dashboard's callback page: passes the provider's query (and its client_state) to the API. */
async function callback(provider: string, query: URLSearchParams, clientState: string) {
  const params = new URLSearchParams(query);
  params.set("client_state", clientState);
  const response = await fetch(`${t.url}/auth/${provider}/callback?${params}`);
  return { status: response.status, code: response.headers.get(ERROR_CODE_HEADER), text: await response.text() };
}

/** The whole browser round trip through the OpenID provider, signed in there as `sub`. */
async function signInWithAcme(sub: string) {
  const clientState = newClientState();
  const back = await idp.signIn((await start("acme", clientState)).href, sub);
  expect(back.origin + back.pathname).toBe(`${DASHBOARD}/auth/acme/callback`);
  return { back, clientState, result: await callback("acme", back.searchParams, clientState) };
}

const userByEmail = async (email: string) =>
  (
    await t.db.query<{ id: number; is_verified: boolean; password_hash: string | null }>(
      `SELECT id, is_verified, password_hash FROM "user" WHERE lower(email) = lower($1)`,
      [email],
    )
  ).rows[0];

const linksOf = async (userId: number) =>
  (
    await t.db.query<{ provider: string; remote_id: string; display_name: string | null }>(
      `SELECT provider, remote_id, display_name FROM "social_service_account" WHERE belongs_to__user = $1`,
      [userId],
    )
  ).rows;

describe("social sign-in (OpenID Connect)", () => {
  it("lists the configured providers for the login buttons", async () => {
    const response = await fetch(`${t.url}/auth/providers`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { slug: "acme", name: "Acme ID" },
      { slug: "github", name: "GitHub" },
    ]);
  });

  it("sends the browser to the provider with PKCE (S256), state and nonce", async () => {
    const url = await start("acme", newClientState());
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get("client_id")).toBe(CLIENT_ID);
    expect(url.searchParams.get("redirect_uri")).toBe(`${DASHBOARD}/auth/acme/callback`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get("state")).toBeTruthy();
    expect(url.searchParams.get("nonce")).toBeTruthy();
    expect(url.searchParams.get("scope")).toBe("openid email profile");
  });

  it("creates a verified account without a password for a new verified email, and signs it in again", async () => {
    idp.account({ sub: "new-1", email: "newcomer@acme.test", email_verified: true, name: "New Comer" });
    const { result } = await signInWithAcme("new-1");
    expect(result.status, result.text).toBe(200);
    const created = await userByEmail("newcomer@acme.test");
    expect(created).toMatchObject({ is_verified: true, password_hash: null });
    expect(claimsOf(result.text).id).toBe(created?.id);
    expect(await linksOf(created?.id ?? 0)).toEqual([
      { provider: "acme", remote_id: "new-1", display_name: "New Comer" },
    ]);
    const { rows: orgs } = await t.db.query(`SELECT 1 FROM "organization_membership" WHERE "user" = $1`, [created?.id]);
    expect(orgs).toHaveLength(1);
    // The provider changing the email later does not make another account: the link decides.
    idp.account({ sub: "new-1", email: "renamed@acme.test", email_verified: true, name: "New Comer" });
    const again = await signInWithAcme("new-1");
    expect(again.result.status).toBe(200);
    expect(claimsOf(again.result.text).id).toBe(created?.id);
    expect(await userByEmail("renamed@acme.test")).toBeUndefined();
  });

  it("links an existing account when the provider has verified the same email (any case)", async () => {
    const bob = await t.factories.user({ email: "bob@acme.test" });
    idp.account({ sub: "bob-remote", email: "BOB@acme.test", email_verified: true });
    const { result } = await signInWithAcme("bob-remote");
    expect(result.status, result.text).toBe(200);
    expect(claimsOf(result.text).id).toBe(bob.user.id);
    expect((await linksOf(bob.user.id)).map((l) => l.remote_id)).toEqual(["bob-remote"]);
  });

  it("refuses an unverified email that an account has, and does not link it", async () => {
    const carol = await t.factories.user({ email: "carol@acme.test" });
    idp.account({ sub: "carol-remote", email: "carol@acme.test", email_verified: false });
    const { result } = await signInWithAcme("carol-remote");
    expect(result.status).toBe(409);
    expect(result.code).toBe("social_email_unverified_existing");
    expect(JSON.parse(result.text).message).toContain("Acme ID has not verified");
    expect(await linksOf(carol.user.id)).toEqual([]);
  });

  it("refuses an unverified email nobody has, and a provider that shares no email", async () => {
    idp.account({ sub: "dave-remote", email: "dave@acme.test", email_verified: false });
    const unverified = await signInWithAcme("dave-remote");
    expect(unverified.result.code).toBe("social_email_unverified");
    expect(await userByEmail("dave@acme.test")).toBeUndefined();
    idp.account({ sub: "anon-remote" });
    const anonymous = await signInWithAcme("anon-remote");
    expect(anonymous.result.code).toBe("social_email_required");
  });

  it("does not link a verified email to an account whose own email was never verified", async () => {
    const squatted = await t.factories.user({ email: "erin@acme.test" });
    await t.db.query(`UPDATE "user" SET is_verified = false WHERE id = $1`, [squatted.user.id]);
    idp.account({ sub: "erin-remote", email: "erin@acme.test", email_verified: true });
    const { result } = await signInWithAcme("erin-remote");
    expect(result.code).toBe("social_account_unverified");
    expect(await linksOf(squatted.user.id)).toEqual([]);
  });

  it("refuses a callback whose client_state is not the one the flow started with (login CSRF)", async () => {
    idp.account({ sub: "frank-remote", email: "frank@acme.test", email_verified: true });
    const victimState = newClientState();
    // The attacker's own flow, finished at the provider; its callback URL is handed to a victim.
    const attackerState = newClientState();
    const back = await idp.signIn((await start("acme", attackerState)).href, "frank-remote");
    const forged = await callback("acme", back.searchParams, victimState);
    expect(forged.status).toBe(400);
    expect(forged.code).toBe("social_state_mismatch");
    // The flow is spent by the attempt.
    expect((await callback("acme", back.searchParams, attackerState)).code).toBe("social_login_expired");
    expect(await userByEmail("frank@acme.test")).toBeUndefined();
  });

  it("refuses an unknown state, and a start without client_state", async () => {
    const unknown = await callback("acme", new URLSearchParams({ code: "x", state: "made-up" }), newClientState());
    expect(unknown.code).toBe("social_login_expired");
    const url = await start("acme");
    expect(url.origin + url.pathname).toBe(`${DASHBOARD}/login`);
    expect(url.searchParams.get("social_error")).toBe("social_state_mismatch");
    const nope = await start("nope", newClientState());
    expect(nope.searchParams.get("social_error")).toBe("social_provider_unknown");
    expect((await callback("nope", new URLSearchParams({ state: "x" }), "y")).status).toBe(404);
  });

  it("refuses a replayed callback, and a code replayed into another flow", async () => {
    idp.account({ sub: "grace-remote", email: "grace@acme.test", email_verified: true });
    const first = await signInWithAcme("grace-remote");
    expect(first.result.status).toBe(200);
    const replay = await callback("acme", first.back.searchParams, first.clientState);
    expect(replay.code).toBe("social_login_expired");
    // The same code with the state of a new flow: the provider refuses it (used, and another PKCE verifier).
    const clientState = newClientState();
    const fresh = await start("acme", clientState);
    const spliced = new URLSearchParams(first.back.searchParams);
    spliced.set("state", fresh.searchParams.get("state") ?? "");
    const result = await callback("acme", spliced, clientState);
    expect(result.status).toBe(401);
    expect(result.code).toBe("social_login_failed");
  });

  it("reports the provider's refusal (error=access_denied) as a failed sign-in", async () => {
    const clientState = newClientState();
    const url = await start("acme", clientState);
    const denied = new URLSearchParams({
      error: "access_denied",
      state: url.searchParams.get("state") ?? "",
      iss: idp.issuer,
    });
    expect((await callback("acme", denied, clientState)).code).toBe("social_login_failed");
  });

  it("starts a session whose authTime is now: a social login counts as re-authentication", async () => {
    const henry = await t.factories.user({ email: "henry@acme.test" });
    await t.factories.organization({ admins: [henry.user] });
    const old = await withClockOffset(-30 * MINUTE, () => t.ctx.tokens.start(henry.user));
    expect(Date.now() - Number(claimsOf(old).authTime)).toBeGreaterThan(20 * MINUTE);
    idp.account({ sub: "henry-remote", email: "henry@acme.test", email_verified: true });
    const { result } = await signInWithAcme("henry-remote");
    const claims = claimsOf(result.text);
    expect(claims.id).toBe(henry.user.id);
    expect(Date.now() - Number(claims.authTime)).toBeLessThan(10_000);
    // A sensitive action (spec 1 §4) is allowed with it.
    const keys = await fetch(`${t.url}/api-key/user/full`, {
      method: "POST",
      headers: { authorization: `Bearer ${result.text}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "fresh", expiryDate: null }),
    });
    expect(keys.status, await keys.text()).toBe(200);
    const stale = await fetch(`${t.url}/api-key/user/full`, {
      method: "POST",
      headers: { authorization: `Bearer ${old}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "stale", expiryDate: null }),
    });
    expect(stale.headers.get(ERROR_CODE_HEADER)).toBe("auth_expired");
  });
});

describe("social sign-in (GitHub)", () => {
  it("signs in with the primary verified email from /user/emails and links the numeric user id", async () => {
    const clientState = newClientState();
    const url = await start("github", clientState);
    expect(url.origin + url.pathname).toBe(`${github.url}/login/oauth/authorize`);
    expect(url.searchParams.get("scope")).toBe("read:user user:email");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    const code = github.authorize(url, {
      user: { id: 4242, login: "octo", name: "Octo Cat" },
      emails: [
        { email: "octo@users.noreply.test", primary: false, verified: true },
        { email: "octo@github.test", primary: true, verified: true },
      ],
    });
    const result = await callback(
      "github",
      new URLSearchParams({ code, state: url.searchParams.get("state") ?? "" }),
      clientState,
    );
    expect(result.status, result.text).toBe(200);
    const created = await userByEmail("octo@github.test");
    expect(claimsOf(result.text).id).toBe(created?.id);
    expect(await linksOf(created?.id ?? 0)).toEqual([
      { provider: "github", remote_id: "4242", display_name: "Octo Cat" },
    ]);
    // GitHub's code is single use too.
    const again = await start("github", clientState);
    const replay = await callback(
      "github",
      new URLSearchParams({ code, state: again.searchParams.get("state") ?? "" }),
      clientState,
    );
    expect(replay.code).toBe("social_login_failed");
  });
});

type GitHubUser = { user: Record<string, unknown>; emails: Record<string, unknown>[] };
type FakeGitHub = Awaited<ReturnType<typeof startFakeGitHub>>;

/** GitHub's OAuth endpoints (with PKCE) and the two REST calls, on 127.0.0.1. */
async function startFakeGitHub() {
  const codes = new Map<string, { challenge: string; redirectUri: string; who: GitHubUser }>();
  const tokens = new Map<string, GitHubUser>();
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? "/", "http://x");
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method === "POST" && url.pathname === "/login/oauth/access_token") {
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      const code = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      const verifier = form.get("code_verifier") ?? "";
      const challenge = crypto.createHash("sha256").update(verifier).digest("base64url");
      if (
        !code ||
        form.get("client_id") !== "gh-client" ||
        form.get("client_secret") !== "gh-secret" ||
        code.challenge !== challenge ||
        code.redirectUri !== form.get("redirect_uri")
      ) {
        return json(400, { error: "bad_verification_code" });
      }
      const token = `gho_${crypto.randomBytes(8).toString("hex")}`;
      tokens.set(token, code.who);
      return json(200, { access_token: token, token_type: "bearer", scope: "read:user,user:email" });
    }
    const who = tokens.get((request.headers.authorization ?? "").replace(/^Bearer /, ""));
    if (!who) return json(401, { message: "Bad credentials" });
    if (url.pathname === "/api/user") return json(200, who.user);
    if (url.pathname === "/api/user/emails") return json(200, who.emails);
    return json(404, { message: "Not Found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    /** The user approves on GitHub: a code for the authorization URL's PKCE challenge. */
    authorize(authorizationUrl: URL, who: GitHubUser): string {
      const code = crypto.randomBytes(10).toString("hex");
      codes.set(code, {
        challenge: authorizationUrl.searchParams.get("code_challenge") ?? "",
        redirectUri: authorizationUrl.searchParams.get("redirect_uri") ?? "",
        who,
      });
      return code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
