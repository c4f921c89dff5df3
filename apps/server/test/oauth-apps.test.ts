import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantGlobalRole } from "../src/features/users/service.ts";
import { ERROR_CODE_HEADER } from "../src/lib/error-handler.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf, client, MINUTE, withClockOffset } from "./support/accounts.ts";

// OAuth applications: registration by platform administrators through the data API, the
// client secret shown once, the grant (POST /oauth/authorize), the code exchange
// (POST /oauth/token) and revocation through the data API.

let t: TestApp;
let api: ReturnType<typeof client>;
let adminToken: string;
let app: { id: number; client_id: string; client_secret: string };
const REDIRECT = "https://app.example.test/oauth/callback";

type Signed = Awaited<ReturnType<TestApp["factories"]["user"]>>;
let alice: Signed;

beforeAll(async () => {
  t = await createTestApp();
  api = client(t);
  const admin = await t.factories.user();
  await grantGlobalRole(t.db.orm, admin.user.id, "balena_admin");
  adminToken = await t.ctx.tokens.start(admin.user);
  alice = await t.factories.user({ email: "alice@oauth.test" });
  const created = await api.post(
    "/v7/oauth_application",
    { name: "Fleet Stats", redirect_uri: REDIRECT, description: "Charts of your fleets" },
    adminToken,
  );
  expect(created.status, created.text).toBe(201);
  const secret = await api.post(`/oauth/applications/${created.json.id}/secret`, undefined, adminToken);
  expect(secret.status, secret.text).toBe(200);
  app = {
    id: Number(created.json.id),
    client_id: String(secret.json.client_id),
    client_secret: String(secret.json.client_secret),
  };
});
afterAll(() => t.close());

async function authorize(token: string, body: Record<string, unknown> = {}) {
  return api.post("/oauth/authorize", { client_id: app.client_id, response_type: "code", ...body }, token);
}

async function exchange(fields: Record<string, string>, form = true) {
  const body = { grant_type: "authorization_code", client_id: app.client_id, redirect_uri: REDIRECT, ...fields };
  const response = await fetch(`${t.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": form ? "application/x-www-form-urlencoded" : "application/json" },
    body: form ? new URLSearchParams(body).toString() : JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

describe("OAuth applications", () => {
  it("are registered by platform administrators only, with a generated client id and no secret in the model", async () => {
    expect(app.client_id).toMatch(/^[0-9a-f]{32}$/);
    expect(app.client_secret.length).toBeGreaterThanOrEqual(40);
    const read = await api.get(`/v7/oauth_application(${app.id})`, alice.token);
    expect(read.status).toBe(200);
    const [row] = (read.json.d as Record<string, unknown>[]) ?? [];
    expect(row).toMatchObject({ client_id: app.client_id, name: "Fleet Stats", redirect_uri: REDIRECT });
    expect(JSON.stringify(read.json)).not.toContain("secret");
    const byUser = await api.post(
      "/v7/oauth_application",
      { name: "Mine", redirect_uri: "https://evil.test/cb" },
      alice.token,
    );
    expect([401, 403]).toContain(byUser.status);
    expect((await api.patch(`/v7/oauth_application(${app.id})`, { name: "X" }, alice.token)).status).not.toBe(200);
    expect((await api.post(`/oauth/applications/${app.id}/secret`, undefined, alice.token)).status).toBe(403);
    const insecure = await api.post(
      "/v7/oauth_application",
      { name: "Plain", redirect_uri: "http://app.example.test/cb" },
      adminToken,
    );
    expect(insecure.status).toBe(400);
    expect(insecure.headers.get(ERROR_CODE_HEADER)).toBe("oauth_redirect_uri_invalid");
  });

  it("shows the consent screen's application to signed-in users", async () => {
    const shown = await api.get(`/oauth/applications/${app.client_id}`, alice.token);
    expect(shown.status).toBe(200);
    expect(shown.json).toEqual({
      id: app.id,
      client_id: app.client_id,
      name: "Fleet Stats",
      description: "Charts of your fleets",
      redirect_uri: REDIRECT,
    });
    expect((await api.get(`/oauth/applications/${app.client_id}`)).status).toBe(401);
    expect((await api.get("/oauth/applications/unknown", alice.token)).json.code).toBe("oauth_application_unknown");
  });

  it("grants a code, records the authorization and exchanges the code for a session token once", async () => {
    const granted = await authorize(alice.token, { state: "xyz 1" });
    expect(granted.status, granted.text).toBe(200);
    const code = String(granted.json.code);
    const redirect = new URL(String(granted.json.redirect_uri));
    expect(redirect.origin + redirect.pathname).toBe(REDIRECT);
    expect(redirect.searchParams.get("code")).toBe(code);
    expect(redirect.searchParams.get("state")).toBe("xyz 1");
    const authorizations = await api.get("/v7/oauth_application_authorization", alice.token);
    expect(authorizations.json.d).toHaveLength(1);

    const token = await exchange({ code, client_secret: app.client_secret });
    expect(token.status).toBe(200);
    expect(token.headers.get("cache-control")).toBe("no-store");
    expect(token.json).toMatchObject({ token_type: "Bearer", expires_in: 36 * 60 * 60 });
    const accessToken = String(token.json.access_token);
    expect(claimsOf(accessToken).id).toBe(alice.user.id);
    expect((await api.get("/actor/v1/whoami", accessToken)).json.username).toBe(alice.user.username);

    const replay = await exchange({ code, client_secret: app.client_secret });
    expect(replay.status).toBe(400);
    expect(replay.json.error).toBe("invalid_grant");
  });

  it("accepts JSON and HTTP Basic client authentication", async () => {
    const code = String((await authorize(alice.token)).json.code);
    const response = await fetch(`${t.url}/oauth/token`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString("base64")}`,
      },
      body: JSON.stringify({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }),
    });
    expect(response.status).toBe(200);
  });

  it("refuses a wrong client secret without spending the code", async () => {
    const code = String((await authorize(alice.token)).json.code);
    const wrong = await exchange({ code, client_secret: "not-the-secret" });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toBe("invalid_client");
    expect((await exchange({ code, client_secret: app.client_secret })).status).toBe(200);
  });

  it("refuses another redirect_uri (and spends the code), a wrong response_type and grant_type", async () => {
    const code = String((await authorize(alice.token)).json.code);
    const wrong = await exchange({ code, client_secret: app.client_secret, redirect_uri: "https://evil.test/cb" });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe("invalid_grant");
    expect((await exchange({ code, client_secret: app.client_secret })).json.error).toBe("invalid_grant");
    const badType = await authorize(alice.token, { response_type: "token" });
    expect(badType.json.code).toBe("oauth_unsupported_response_type");
    const otherRedirect = await authorize(alice.token, { redirect_uri: "https://evil.test/cb" });
    expect(otherRedirect.status).toBe(400);
    const grant = await exchange({ code: "x", client_secret: app.client_secret, grant_type: "password" });
    expect(grant.json.error).toBe("unsupported_grant_type");
  });

  it("does not make the application's token a fresh sign-in", async () => {
    const old = await withClockOffset(-30 * MINUTE, () => t.ctx.tokens.start(alice.user));
    const code = String((await authorize(old)).json.code);
    const token = await exchange({ code, client_secret: app.client_secret });
    expect(Date.now() - Number(claimsOf(String(token.json.access_token)).authTime)).toBeGreaterThan(20 * MINUTE);
  });

  it("ends the application's sessions when the user revokes the authorization", async () => {
    const bob = await t.factories.user({ email: "bob@oauth.test" });
    const code = String((await authorize(bob.token)).json.code);
    const accessToken = String((await exchange({ code, client_secret: app.client_secret })).json.access_token);
    expect((await api.get("/actor/v1/whoami", accessToken)).status).toBe(200);
    const [authorization] = (await api.get("/v7/oauth_application_authorization", bob.token)).json.d as {
      id: number;
    }[];
    // Grants go through POST /oauth/authorize, not the data API.
    const forged = await api.post(
      "/v7/oauth_application_authorization",
      { belongs_to__user: bob.user.id, is_for__oauth_application: app.id },
      bob.token,
    );
    expect([401, 403]).toContain(forged.status);
    // Another user cannot revoke it.
    await api.del(`/v7/oauth_application_authorization(${authorization?.id})`, alice.token);
    expect((await api.get("/actor/v1/whoami", accessToken)).status).toBe(200);
    const revoked = await api.del(`/v7/oauth_application_authorization(${authorization?.id})`, bob.token);
    expect(revoked.status).toBe(200);
    expect((await api.get("/actor/v1/whoami", accessToken)).status).toBe(401);
    expect((await api.get("/actor/v1/whoami", bob.token)).status).toBe(200);
  });
});
