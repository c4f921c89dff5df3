import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf, client, MINUTE, withClockOffset } from "./support/accounts.ts";

let t: TestApp;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  t = await createTestApp();
  api = client(t);
});
afterAll(() => t.close());

/** The TOTP code of `steps` periods from now (the server accepts one period of drift either way). */
const totp = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 * steps });

/** As if a minute had passed since the last accepted code: the replay guard lets the next step in. */
const forgetLastStep = (userId: number) =>
  t.db.query('UPDATE "user" SET totp_last_step = NULL WHERE id = $1', [userId]);

const login = async (username: string, password: string) => {
  const response = await api.post("/login_", { username, password });
  expect(response.status).toBe(200);
  return response.text;
};

/** A user with two-factor enabled through the API, and the session that enabled it. */
async function userWithTwoFactor() {
  const { user, token, password } = await t.factories.user();
  const secret = (await api.get("/auth/totp/setup", token)).text;
  const enabled = await api.post("/auth/totp/verify", { code: await totp(secret) }, token);
  expect(enabled.status).toBe(200);
  return { user, password, secret, token: enabled.text };
}

describe("two-factor setup", () => {
  it("hands out a base32 secret, kept pending until a code from it is verified", async () => {
    const { user, token } = await t.factories.user();
    expect((await api.get("/user/v1/two-factor", token)).json).toEqual({
      enabled: false,
      pending: false,
      recoveryCodesLeft: 0,
    });
    const setup = await api.get("/auth/totp/setup", token);
    expect(setup.status).toBe(200);
    expect(setup.headers.get("content-type")).toContain("text/plain");
    expect(setup.text).toMatch(/^[A-Z2-7]{16,}$/);
    expect((await api.get("/user/v1/two-factor", token)).json).toMatchObject({ enabled: false, pending: true });

    const malformed = await api.post("/auth/totp/verify", { code: "12345" }, token);
    expect([malformed.status, malformed.json]).toEqual([
      400,
      { code: "bad_request", message: "code: The code is 6 digits" },
    ]);
    const wrongCode = (await totp(setup.text)) === "000000" ? "111111" : "000000";
    const wrong = await api.post("/auth/totp/verify", { code: wrongCode }, token);
    expect([wrong.status, wrong.json]).toEqual([
      400,
      { code: "two_factor_code_invalid", errorCode: 2, message: "code invalid" },
    ]);

    const enabled = await api.post("/auth/totp/verify", { code: await totp(setup.text) }, token);
    expect(enabled.status).toBe(200);
    expect(claimsOf(enabled.text)).toMatchObject({ twoFactorRequired: false, session: claimsOf(token).session });
    expect((await api.get("/user/v1/two-factor", enabled.text)).json).toEqual({
      enabled: true,
      pending: false,
      recoveryCodesLeft: 0,
    });
    const again = await api.get("/auth/totp/setup", enabled.text);
    expect([again.status, again.json?.message]).toEqual([409, "Two-factor authentication is already enabled."]);
    const { rows } = await t.db.query('SELECT totp_secret, totp_pending_secret FROM "user" WHERE id = $1', [user.id]);
    expect(rows).toEqual([{ totp_secret: setup.text, totp_pending_secret: null }]);
  });

  it("refuses verify before any setup", async () => {
    const { token } = await t.factories.user();
    const response = await api.post("/auth/totp/verify", { code: "123456" }, token);
    expect(response.status).toBe(400);
  });
});

describe("signing in with two-factor", () => {
  it("gives a pending token that may only complete the second factor", async () => {
    const { user, password, secret } = await userWithTwoFactor();
    const pending = await login(user.email ?? "", password);
    expect(claimsOf(pending).twoFactorRequired).toBe(true);

    const blocked = {
      code: "two_factor_required",
      message: "Two-factor authentication is required: enter your authenticator code or a recovery code.",
    };
    for (const [method, path] of [
      ["GET", "/v7/application"],
      ["GET", "/user/v1/two-factor"],
      ["PATCH", "/user/profile"],
      ["POST", "/logout-others"],
      ["POST", "/user/v1/refresh-token"],
      ["GET", "/auth/totp/setup"],
    ] as const) {
      const response = await api.call(method, path, { token: pending, body: method === "GET" ? undefined : {} });
      expect(response.status, `${method} ${path}`).toBe(401);
      if (!path.startsWith("/v7")) expect(response.json, path).toEqual(blocked);
    }
    expect((await api.get("/actor/v1/whoami", pending)).status).toBe(200);
    const refreshed = await api.get("/user/v1/refresh-token", pending);
    expect(claimsOf(refreshed.text).twoFactorRequired).toBe(true);

    // The code that enabled two-factor was accepted once already: replay refused.
    const replay = await api.post("/auth/totp/verify", { code: await totp(secret) }, pending);
    expect([replay.status, replay.json?.errorCode]).toEqual([400, 2]);
    const passed = await api.post("/auth/totp/verify", { code: await totp(secret, 1) }, pending);
    expect(passed.status).toBe(200);
    expect(claimsOf(passed.text)).toMatchObject({ twoFactorRequired: false, session: claimsOf(pending).session });
    expect((await api.get("/v7/application", passed.text)).status).toBe(200);
    // The same code again, in another session: refused.
    const other = await login(user.email ?? "", password);
    const reused = await api.post("/auth/totp/verify", { code: await totp(secret, 1) }, other);
    expect(reused.status).toBe(400);
    // The audit log has the enabling, the replayed code, the passed step and the reused code; never a code.
    const { rows } = await t.db.query<{ action: string; details: unknown }>(
      `SELECT action, details FROM "audit_event" WHERE target_user = $1 AND action LIKE 'two_factor.%' ORDER BY id`,
      [user.id],
    );
    expect(rows).toEqual([
      { action: "two_factor.enabled", details: null },
      { action: "two_factor.failed", details: { method: "totp" } },
      { action: "two_factor.passed", details: { method: "totp" } },
      { action: "two_factor.failed", details: { method: "totp" } },
    ]);
  });

  it("answers 429 with Retry-After after 5 wrong codes in 15 minutes, even for a right one", async () => {
    const { user, password, secret } = await userWithTwoFactor();
    await forgetLastStep(user.id);
    const pending = await login(user.email ?? "", password);
    const right = await totp(secret, 1);
    const wrong = right === "000000" ? "111111" : "000000";
    for (let i = 0; i < 5; i++) {
      expect((await api.post("/auth/totp/verify", { code: wrong }, pending)).status).toBe(400);
    }
    const limited = await api.post("/auth/totp/verify", { code: right }, pending);
    expect([limited.status, limited.json?.message]).toEqual([429, "Too many wrong two-factor codes. Try again later."]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(800);
    const recovery = await api.post("/auth/v1/2fa-recover/verify", { code: "abcde-fghij" }, pending);
    expect(recovery.status).toBe(429);
  });
});

describe("recovery codes", () => {
  it("creates 10 single-use codes, stored hashed, that pass the second factor; regenerating replaces them", async () => {
    const { user, password, token } = await userWithTwoFactor();
    const created = await api.post("/auth/v1/2fa-recover/create", undefined, token);
    expect(created.status).toBe(200);
    const codes = created.json as unknown as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const stored = await t.db.query('SELECT code_hash FROM "recovery_two_factor" WHERE belongs_to__user = $1', [
      user.id,
    ]);
    expect(stored.rows).toHaveLength(10);
    expect(stored.rows.map((r) => r.code_hash)).not.toContain(codes[0]);
    expect((await api.get("/user/v1/two-factor", token)).json).toMatchObject({ recoveryCodesLeft: 10 });

    const pending = await login(user.email ?? "", password);
    const passed = await api.post("/auth/v1/2fa-recover/verify", { code: (codes[0] ?? "").toUpperCase() }, pending);
    expect(passed.status).toBe(200);
    expect(claimsOf(passed.text).twoFactorRequired).toBe(false);
    const again = await login(user.email ?? "", password);
    const reused = await api.post("/auth/v1/2fa-recover/verify", { code: codes[0] }, again);
    expect([reused.status, reused.json?.errorCode]).toEqual([400, 2]);
    expect((await api.get("/user/v1/two-factor", passed.text)).json).toMatchObject({ recoveryCodesLeft: 9 });
    // The records (spec 1 §3 "recovery code: recovery_code, used_timestamp"): the used one is
    // stamped; the code itself is not readable, only shown when created.
    const records = await api.get("/v7/recovery_two_factor?$select=id,used_timestamp", passed.text);
    const rows = records.json.d as Array<{ used_timestamp: string | null }>;
    expect(rows).toHaveLength(10);
    expect(rows.filter((row) => row.used_timestamp !== null)).toHaveLength(1);
    expect(Number.isNaN(Date.parse(rows.find((row) => row.used_timestamp)?.used_timestamp ?? ""))).toBe(false);

    const regenerated = (await api.post("/auth/v1/2fa-recover/create", undefined, token)).json as unknown as string[];
    expect(regenerated).toHaveLength(10);
    const old = await api.post("/auth/v1/2fa-recover/verify", { code: codes[1] }, again);
    expect(old.status).toBe(400);
    const fresh = await api.post("/auth/v1/2fa-recover/verify", { code: regenerated[1] }, again);
    expect(fresh.status).toBe(200);
  });

  it("needs two-factor enabled and a recent sign-in to create codes", async () => {
    const { token } = await t.factories.user();
    const response = await api.post("/auth/v1/2fa-recover/create", undefined, token);
    expect([response.status, response.json?.message]).toEqual([400, "Two-factor authentication is not enabled."]);
    const { user } = await userWithTwoFactor();
    // A session of before two-factor was enabled (no flag), signed in 21 minutes ago.
    const stale = await withClockOffset(-21 * MINUTE, () => t.ctx.tokens.start(user));
    const expired = await api.post("/auth/v1/2fa-recover/create", undefined, stale);
    expect([expired.status, expired.json?.code]).toEqual([403, "auth_expired"]);
  });
});

describe("disabling two-factor", () => {
  it("needs the password and a recent sign-in, then drops the flag and the recovery codes", async () => {
    const { user, password, token } = await userWithTwoFactor();
    await api.post("/auth/v1/2fa-recover/create", undefined, token);
    const wrong = await api.post("/auth/totp/disable", { password: "not-the-password" }, token);
    expect([wrong.status, wrong.json?.code]).toEqual([401, "invalid_password"]);
    const missing = await api.post("/auth/totp/disable", {}, token);
    expect(missing.json).toEqual({ code: "bad_request", message: "password: Password is required" });
    const disabled = await api.post("/auth/totp/disable", { password }, token);
    expect(disabled.status).toBe(200);
    expect(claimsOf(disabled.text)).not.toHaveProperty("twoFactorRequired");
    const { rows } = await t.db.query(
      `SELECT totp_secret, (SELECT count(*)::int FROM recovery_two_factor WHERE belongs_to__user = $1) AS codes
         FROM "user" WHERE id = $1`,
      [user.id],
    );
    expect(rows).toEqual([{ totp_secret: null, codes: 0 }]);
    expect(claimsOf(await login(user.email ?? "", password))).not.toHaveProperty("twoFactorRequired");
  });
});
