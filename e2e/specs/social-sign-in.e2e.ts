import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOidcIdp, type TestOidcIdp } from "../../apps/server/test/support/oidc-idp.ts";
import { freePort, launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { shot } from "./accounts-helpers.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO, recordUrls, signIn } from "./web-helpers.ts";

const CLIENT_ID = "flotilla-e2e";
const CLIENT_SECRET = "flotilla-e2e-secret-0123456789";
const ADMIN = { email: "platform-admin@example.com", password: "platform-admin-pw-1" };
const PORTAL_SECRET = "support-portal-secret-0123456789";
const MEMBER_EMAIL = "demo-member@example.com";
const SECRET = crypto.randomBytes(36).toString("base64url");

/** The same session's token, signed with the server's secret, as if the login were `ageMs` old. */
function agedToken(token: string, ageMs: number): string {
  const [header, payload] = token.split(".");
  const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
  const body = Buffer.from(JSON.stringify({ ...claims, authTime: Date.now() - ageMs })).toString("base64url");
  const signature = crypto.createHmac("sha256", SECRET).update(`${header}.${body}`).digest("base64url");
  return `${header}.${body}.${signature}`;
}
const authTimeOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as { authTime: number }).authTime;

/** A tiny http server on 127.0.0.1 that remembers every URL it was asked for. */
async function recorder() {
  const hits: URL[] = [];
  const server = http.createServer((request, response) => {
    hits.push(new URL(request.url ?? "/", "http://127.0.0.1"));
    response.setHeader("content-type", "text/html; charset=utf-8");
    response.end("<!doctype html><title>Arrived</title><h1>Arrived</h1>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
type Recorder = Awaited<ReturnType<typeof recorder>>;

/**
 * Social sign-in with a real OpenID Connect provider (the server tests' oidc-provider, its own
 * login and consent pages driven as a person would), the OAuth authorization page for a
 * registered application (grant, code exchange, refusal), and the support-portal handoff.
 */
describe("social sign-in, OAuth authorization and the support portal", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let idp: TestOidcIdp;
  let target: Recorder;
  let portal: Recorder;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // The provider must know the dashboard's callback before the server starts: ports first.
    const ports = { dashboard: await freePort(), api: await freePort() };
    [idp, target, portal, browser] = await Promise.all([
      startOidcIdp({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [`http://localhost:${ports.dashboard}/auth/acme/callback`],
      }),
      recorder(),
      recorder(),
      launchBrowser(),
    ]);
    flotilla = await startFlotilla(
      {
        FLOTILLA_SECRET: SECRET,
        FLOTILLA_OIDC_ACME_ISSUER: idp.issuer,
        FLOTILLA_OIDC_ACME_CLIENT_ID: CLIENT_ID,
        FLOTILLA_OIDC_ACME_CLIENT_SECRET: CLIENT_SECRET,
        FLOTILLA_OIDC_ACME_NAME: "Acme ID",
        FLOTILLA_ADMIN_EMAIL: ADMIN.email,
        FLOTILLA_ADMIN_PASSWORD: ADMIN.password,
        FLOTILLA_SUPPORT_PORTAL_URL: `${portal.origin}/access/jwt`,
        FLOTILLA_SUPPORT_PORTAL_SECRET: PORTAL_SECRET,
      },
      { ports },
    );
  }, 120_000);
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await flotilla?.stop();
    await idp?.close();
    await target?.close();
    await portal?.close();
  });

  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;
  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(consent);
    contexts.push(context);
    return context.newPage();
  }
  async function apiCall<T>(method: string, p: string, token?: string, body?: unknown): Promise<T> {
    const response = await fetch(`${flotilla.apiUrl}${p}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${p}: ${response.status} ${text}`);
    return (response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text) as T;
  }
  const login = (email: string, password: string) =>
    apiCall<string>("POST", "/login_", undefined, { username: email, password });

  it("signs a new person in through the provider's own login and consent pages", async () => {
    idp.account({ sub: "ann-1", email: "ann@acme.test", email_verified: true, name: "Ann Acme" });
    const page = await newPage();

    // A failed start comes back to the login page with the reason in words.
    await page.goto(url("/login?social_error=social_state_mismatch&provider=acme"));
    await page
      .getByRole("alert")
      .getByText("This sign-in with Acme ID was not started from this browser. Please start it again.")
      .waitFor();

    // The sign-up page offers the provider too.
    await page.goto(url("/signup"));
    await page.getByRole("button", { name: "Sign up with Acme ID" }).waitFor();
    await shot(page, "social-00-signup");

    await page.goto(url("/login"));
    const button = page.getByRole("button", { name: "Sign in with Acme ID" });
    await button.waitFor();
    await shot(page, "social-01-login");
    await button.click();

    // The provider's development login form: any login, any password; then its consent page.
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
    await page.getByPlaceholder("Enter any login").fill("ann-1");
    await page.getByPlaceholder("and password").fill("whatever");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();

    // Back at the dashboard's callback, which finishes the sign-in with the API.
    await page.waitForURL(/\/fleets$/, { timeout: 30_000 });
    const me = await api<{ d: Array<{ email: string; has_password_set: boolean }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/user?$select=email,has_password_set",
    );
    expect(me.d[0]).toMatchObject({ email: "ann@acme.test", has_password_set: false });

    // Re-authentication without a password (spec 1 §4): a sensitive action on a login older than
    // 20 minutes offers to sign in again with the provider, which comes back to the same page.
    const token = (await page.evaluate(() => localStorage.getItem("balena-token"))) ?? "";
    await page.evaluate((aged) => localStorage.setItem("balena-token", aged), agedToken(token, 21 * 60 * 1000));
    await page.goto(url("/preferences/access-tokens"));
    await page.getByRole("button", { name: "Create API key" }).first().click();
    const create = page.getByRole("dialog", { name: "Create API key" });
    await create.getByLabel("Name").fill("from-acme");
    await create.getByRole("button", { name: "Create API key" }).click();
    const reauth = page.getByRole("dialog", { name: "Confirm it's you" });
    await reauth.getByText("For your security, sign in again with Acme ID to continue.", { exact: false }).waitFor();
    await shot(page, "social-04-reauth");
    const visited = recordUrls(page);
    await reauth.getByRole("button", { name: "Sign in again with Acme ID" }).click();
    // The provider may remember the person (straight back, no form) or ask again: whatever it shows.
    const deadline = Date.now() + 30_000;
    while (!visited.some((u) => new URL(u).pathname === "/auth/acme/callback")) {
      if (Date.now() > deadline) throw new Error(`no way back from the provider: ${visited.join(" → ")}`);
      const form = page.getByPlaceholder("Enter any login");
      const next = page.getByRole("button", { name: "Continue" });
      if (await form.isVisible().catch(() => false)) {
        await form.fill("ann-1");
        await page.getByPlaceholder("and password").fill("whatever");
        await page.getByRole("button", { name: "Sign-in" }).click();
      } else if (await next.isVisible().catch(() => false)) {
        await next.click();
      }
      await page.waitForTimeout(200);
    }
    await page.waitForURL(/\/preferences\/access-tokens$/, { timeout: 30_000 });
    const fresh = (await page.evaluate(() => localStorage.getItem("balena-token"))) ?? "";
    expect(Date.now() - authTimeOf(fresh)).toBeLessThan(60_000);

    // The same callback again (a replay) is refused, in words, with the way back to login.
    const replay = await newPage();
    await replay.goto(url("/auth/acme/callback?code=x&state=y"));
    await replay
      .getByRole("alert")
      .getByText(/Acme ID has expired or was already used/)
      .waitFor();
    await replay.getByRole("link", { name: "Back to login" }).waitFor();
    await shot(replay, "social-03-callback-error");
  });

  it("lets a signed-in user authorize a registered application, or deny it", async () => {
    const adminToken = await login(ADMIN.email, ADMIN.password);
    const created = await apiCall<{ id: number }>("POST", "/v7/oauth_application", adminToken, {
      name: "Fleet Stats",
      redirect_uri: `${target.origin}/callback`,
      description: "Charts of your fleets, every morning.",
    });
    const { client_id: clientId, client_secret: clientSecret } = await apiCall<{
      client_id: string;
      client_secret: string;
    }>("POST", `/oauth/applications/${created.id}/secret`, adminToken);

    // Signed out: the page sends the person to log in, then back to it, state and all.
    const page = await newPage();
    await page.goto(url(`/login/oauth/${clientId}?state=xyz`));
    await page.waitForURL(/\/login\?redirect=/);
    await signIn(page);
    await page.waitForURL((u) => u.pathname === `/login/oauth/${clientId}` && u.search === "?state=xyz");
    await page.getByRole("heading", { name: "Authorize Fleet Stats" }).waitFor();
    await page.getByText("Charts of your fleets, every morning.").waitFor();
    await page.getByText(`You will be sent to ${new URL(target.origin).host}.`).waitFor();
    await shot(page, "social-02-oauth-consent");

    await page.getByRole("button", { name: "Authorize" }).click();
    await page.waitForURL((u) => u.href.startsWith(`${target.origin}/callback`));
    const arrived = new URL(page.url());
    expect(arrived.searchParams.get("state")).toBe("xyz");
    const code = arrived.searchParams.get("code") ?? "";
    expect(code).not.toBe("");
    // The application's server got the code (the browser may ask it for more, e.g. a favicon).
    expect(
      target.hits
        .filter((hit) => hit.pathname === "/callback")
        .at(-1)
        ?.searchParams.get("code"),
    ).toBe(code);

    // The application exchanges the code for a token of the demo user.
    const exchanged = await fetch(`${flotilla.apiUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: `${target.origin}/callback`,
        client_id: clientId,
        client_secret: clientSecret,
      }).toString(),
    });
    expect(exchanged.status).toBe(200);
    const { access_token: accessToken } = (await exchanged.json()) as { access_token: string };
    const whoami = await apiCall<{ email?: string; username?: string }>("GET", "/actor/v1/whoami", accessToken);
    expect(whoami.email ?? whoami.username).toMatch(/^demo(@example\.com)?$/);

    // Granting needs a recent login: an old one is asked for the password, then the grant goes on.
    await page.goto(url(`/login/oauth/${clientId}?state=again`));
    await page.getByRole("heading", { name: "Authorize Fleet Stats" }).waitFor();
    const current = (await page.evaluate(() => localStorage.getItem("balena-token"))) ?? "";
    await page.evaluate((aged) => localStorage.setItem("balena-token", aged), agedToken(current, 21 * 60 * 1000));
    await page.reload();
    await page.getByRole("button", { name: "Authorize" }).click();
    const confirm = page.getByRole("dialog", { name: "Confirm your password" });
    await confirm.getByLabel("Password", { exact: true }).fill(DEMO.password);
    await confirm.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL((u) => u.href.startsWith(`${target.origin}/callback`) && u.search.includes("state=again"));
    expect(new URL(page.url()).searchParams.get("code")).not.toBe("");

    // Another person refuses: back at the application with access_denied, nothing granted.
    const member = await newPage();
    await member.goto(url("/login"));
    await signIn(member, MEMBER_EMAIL, DEMO.password);
    await member.waitForURL(/\/fleets$/);
    await member.goto(url(`/login/oauth/${clientId}?state=no-thanks`));
    await member.getByRole("button", { name: "Deny" }).click();
    await member.waitForURL((u) => u.href.startsWith(`${target.origin}/callback`));
    const denied = new URL(member.url());
    expect(Object.fromEntries(denied.searchParams)).toEqual({ error: "access_denied", state: "no-thanks" });
    const memberToken = await login(MEMBER_EMAIL, DEMO.password);
    const grants = await apiCall<{ d: unknown[] }>(
      "GET",
      "/v7/oauth_application_authorization?$select=id",
      memberToken,
    );
    expect(grants.d).toEqual([]);

    // An unknown client id is said plainly.
    await member.goto(url("/login/oauth/no-such-app"));
    await member.getByText("There is no application with the client id no-such-app.", { exact: false }).waitFor();
  });

  it("hands a signed-in user to the support portal with a signed token", async () => {
    const page = await newPage();
    await page.goto(url("/login"));
    await signIn(page);
    await page.waitForURL(/\/fleets$/);
    const returnTo = "https://help.example.com/hc/requests/new";
    await page.goto(url(`/zendesk-login?return_to=${encodeURIComponent(returnTo)}`));
    await page.waitForURL((u) => u.href.startsWith(`${portal.origin}/access/jwt`));
    const arrived = new URL(page.url());
    expect(arrived.searchParams.get("return_to")).toBe(returnTo);
    const [header = "", payload = "", signature = ""] = (arrived.searchParams.get("jwt") ?? "").split(".");
    const expected = crypto.createHmac("sha256", PORTAL_SECRET).update(`${header}.${payload}`).digest("base64url");
    expect(signature).toBe(expected);
    expect(JSON.parse(Buffer.from(payload, "base64url").toString())).toMatchObject({ email: DEMO.email });
  });
});
