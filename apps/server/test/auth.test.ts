import { getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const sdkFor = (url: string) => getSdk({ apiUrl: url, dataDirectory: false });

describe("sessions through balena-sdk", () => {
  it("logs in with email and password and answers whoami", async () => {
    const { user, password } = await t.factories.user({ email: "ada@example.com" });
    const sdk = sdkFor(t.url);
    await sdk.auth.login({ email: "ada@example.com", password });
    expect(await sdk.auth.isLoggedIn()).toBe(true);
    const me = await sdk.auth.whoami();
    expect(me).toMatchObject({ actorType: "user", actorTypeId: user.id, username: user.username, email: user.email });
  });

  it("accepts the username instead of the email, case-insensitively", async () => {
    const { user, password } = await t.factories.user();
    const sdk = sdkFor(t.url);
    await sdk.auth.login({ email: user.username.toUpperCase(), password });
    expect(await sdk.auth.isLoggedIn()).toBe(true);
  });

  it("refuses a wrong password with invalid login credentials", async () => {
    const { user } = await t.factories.user();
    const sdk = sdkFor(t.url);
    await expect(sdk.auth.login({ email: user.email ?? "", password: "wrong-password" })).rejects.toMatchObject({
      code: "BalenaInvalidLoginCredentials",
    });
    expect(await sdk.auth.isLoggedIn()).toBe(false);
  });

  it("answers 429 with Retry-After after 10 failed logins for one account", async () => {
    const { user, password } = await t.factories.user();
    const attempt = (pass: string) =>
      fetch(`${t.url}/login_`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: user.email, password: pass }),
      });
    for (let i = 0; i < 10; i++) expect((await attempt("wrong-password")).status).toBe(401);
    const blocked = await attempt(password);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(800);
  });

  it("refreshes a session token for the same session and keeps authTime", async () => {
    const { token } = await t.factories.user();
    const response = await fetch(`${t.url}/user/v1/refresh-token`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const fresh = await response.text();
    const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString());
    expect(claims(fresh).session).toBe(claims(token).session);
    expect(claims(fresh).authTime).toBe(claims(token).authTime);
    expect(claims(fresh).exp - claims(fresh).iat).toBe(36 * 60 * 60);
  });

  it("rejects a revoked session", async () => {
    const { token } = await t.factories.user();
    const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
    await t.ctx.tokens.revoke(claims.session);
    const response = await fetch(`${t.url}/actor/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ code: "session_expired", message: "Your session has expired." });
  });

  it("rejects a token signed with another secret as malformed", async () => {
    const { token } = await t.factories.user();
    const [header, payload] = token.split(".");
    const response = await fetch(`${t.url}/actor/v1/whoami`, {
      headers: { authorization: `Bearer ${header}.${payload}.c2lnbmF0dXJl` },
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { code: string }).code).toBe("malformed_token");
  });

  it("names the missing field when the login body is incomplete", async () => {
    const response = await fetch(`${t.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "someone" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: "bad_request", message: "password: is required" });
  });

  it("marks platform administrators' tokens with admin.home", async () => {
    const admin = await createTestApp({
      FLOTILLA_ADMIN_EMAIL: "root@example.com",
      FLOTILLA_ADMIN_PASSWORD: "admin-password",
    });
    try {
      const { ensureAdmin } = await import("../src/features/demo/seed.ts");
      await ensureAdmin(admin.db, admin.config, admin.app.log);
      const response = await fetch(`${admin.url}/login_`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "root@example.com", password: "admin-password" }),
      });
      const token = await response.text();
      const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
      expect(claims.permissions).toEqual(["admin.home"]);
    } finally {
      await admin.close();
    }
  });
});
