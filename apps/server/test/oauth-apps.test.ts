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

  it("needs a fresh sign-in to grant, and never makes the application's token a fresh one", async () => {
    // Granting is a sensitive action (security review 3): a sign-in older than 20 minutes is asked again.
    const old = await withClockOffset(-30 * MINUTE, () => t.ctx.tokens.start(alice.user));
    const stale = await authorize(old);
    expect(stale.status).toBe(403);
    expect(stale.json.code).toBe("auth_expired");
    // Granted right after signing in, the token is still no sign-in: it cannot mint a key.
    const code = String((await authorize(alice.token)).json.code);
    const token = String((await exchange({ code, client_secret: app.client_secret })).json.access_token);
    expect(Date.now() - Number(claimsOf(token).authTime)).toBeLessThan(20 * MINUTE);
    const key = await api.post("/api-key/user/full", { name: "from the app" }, token);
    expect(key.status).toBe(403);
    expect(key.json.code).toBe("delegated_token_refused");
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

describe("tokens issued to an application (security review 3)", () => {
  const REFUSAL = {
    code: "delegated_token_refused",
    message: "Tokens issued to an application cannot manage credentials.",
  };
  const PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGv2c0Q3J6sT0mX8yQ3cK1r9hZQb6mKQ3n9gVt7nVq1k carol@laptop";

  it("are marked delegated, act for the user, and are refused on every credential route", async () => {
    const carol = await t.factories.user({ email: "carol@oauth.test" });
    const org = await t.factories.organization({ admins: [carol.user] });
    const fleet = await t.factories.fleet(org);
    const device = await t.factories.device(fleet);
    // What carol made herself, with her own (fresh) session.
    const ownKey = await api.post("/api-key/user/full", { name: "carol's own" }, carol.token);
    expect(ownKey.status, ownKey.text).toBe(200);
    const ownSsh = await api.post(
      "/v7/user__has__public_key",
      { title: "laptop", public_key: PUBLIC_KEY, user: carol.user.id },
      carol.token,
    );
    expect(ownSsh.status, ownSsh.text).toBe(201);
    const [apiKeyRow] = (await api.get("/v7/api_key?$select=id", carol.token)).json.d as { id: number }[];

    const code = String((await authorize(carol.token)).json.code);
    const token = String((await exchange({ code, client_secret: app.client_secret })).json.access_token);
    expect(claimsOf(token).delegatedTo).toBe(app.id);
    // Its refreshed token stays delegated.
    const refreshed = await api.get("/user/v1/refresh-token", token);
    expect(refreshed.status).toBe(200);
    expect(claimsOf(refreshed.text).delegatedTo).toBe(app.id);

    // It acts for carol on her data.
    expect((await api.get("/actor/v1/whoami", token)).json.username).toBe(carol.user.username);
    expect((await api.get(`/v7/application(${fleet.id})?$select=app_name`, token)).status).toBe(200);
    expect((await api.patch("/user/profile", profileOf("Carol"), token)).status).toBe(200);

    const refused: [string, string, unknown?][] = [
      ["POST", "/api-key/user/full", { name: "stolen" }],
      [
        "POST",
        "/api-key/v2/",
        { actorType: "application", actorTypeId: fleet.id, roles: ["provisioning-api-key"], name: "stolen" },
      ],
      ["POST", `/api-key/device/${device.id}/device-key`, {}],
      ["POST", "/download-config", { appId: fleet.id, version: "6.0.0" }],
      ["PATCH", `/v7/api_key(${apiKeyRow?.id})`, { expiry_date: null }],
      ["DELETE", `/v7/api_key(${apiKeyRow?.id})`],
      ["POST", "/v7/user__has__public_key", { title: "backdoor", public_key: PUBLIC_KEY, user: carol.user.id }],
      ["DELETE", `/v7/user__has__public_key(${ownSsh.json.id})`],
      ["POST", "/user/v1/ssh-keys/import", { url: "https://github.com/carol.keys" }],
      ["POST", "/oauth/authorize", { client_id: app.client_id, response_type: "code" }],
      ["PATCH", "/user/password", { currentPassword: carol.password, password: "a-new-password-1" }],
      ["PATCH", "/user/email", { email: "carol-new@oauth.test", password: carol.password }],
      ["POST", "/user/v1/refresh-token", { password: carol.password }],
      ["GET", "/auth/totp/setup"],
      ["POST", "/auth/totp/verify", { code: "123456" }],
      ["POST", "/auth/totp/disable", { password: carol.password }],
      ["POST", "/auth/v1/2fa-recover/create"],
      ["POST", "/auth/v1/2fa-recover/verify", { code: "abcde-fghjk" }],
      ["POST", "/logout-others"],
      ["GET", "/zendesk/v1/login"],
      ["GET", "/user/v1/intercom"],
      ["DELETE", `/v7/user(${carol.user.id})`],
      ["POST", "/auth/saml/finalize", { code: "x", jwt: token }],
    ];
    for (const [method, path, body] of refused) {
      for (const bearer of [token, refreshed.text]) {
        const answer = await api.call(method, path, { token: bearer, body });
        expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(403);
        // The data API answers its errors as text (as balena's does); the others as JSON.
        expect(answer.headers.get(ERROR_CODE_HEADER), `${method} ${path}`).toBe(REFUSAL.code);
        expect(answer.text, `${method} ${path}`).toContain(REFUSAL.message);
      }
    }
    // The same writes inside a $batch are refused too.
    const batch = await api.post(
      "/v7/$batch",
      {
        requests: [
          {
            id: "1",
            method: "POST",
            url: "/v7/user__has__public_key",
            body: { title: "backdoor", public_key: PUBLIC_KEY, user: carol.user.id },
          },
        ],
      },
      token,
    );
    expect(JSON.stringify(batch.json)).toContain("delegated_token_refused");

    // Nothing was made or changed: carol still has exactly her own key and SSH key.
    const keys = (await api.get("/v7/api_key?$select=id,expiry_date", carol.token)).json.d as unknown[];
    expect(keys).toEqual([{ id: apiKeyRow?.id, expiry_date: null }]);
    const sshKeys = (await api.get("/v7/user__has__public_key?$select=title", carol.token)).json.d;
    expect(sshKeys).toEqual([{ title: "laptop" }]);
    const { rows: fleetKeys } = await t.db.query(`SELECT id FROM "api_key" WHERE is_of__actor IN ($1, $2)`, [
      fleet.actor,
      device.actor,
    ]);
    expect(fleetKeys).toEqual([]);
    expect((await api.get("/v7/oauth_application_authorization?$select=id", carol.token)).json.d).toHaveLength(1);

    // Revoked: neither the token nor its refresh works; carol's session and key still do.
    const [authorization] = (await api.get("/v7/oauth_application_authorization", carol.token)).json.d as {
      id: number;
    }[];
    expect((await api.del(`/v7/oauth_application_authorization(${authorization?.id})`, carol.token)).status).toBe(200);
    expect((await api.get("/actor/v1/whoami", token)).status).toBe(401);
    expect((await api.get("/actor/v1/whoami", refreshed.text)).status).toBe(401);
    expect((await api.get("/actor/v1/whoami", carol.token)).status).toBe(200);
    expect((await api.get("/actor/v1/whoami", JSON.parse(ownKey.text) as string)).status).toBe(200);
  });
});

const profileOf = (firstName: string) => ({
  first_name: firstName,
  last_name: "Example",
  company: "Flotilla",
  account_type: "personal",
});
