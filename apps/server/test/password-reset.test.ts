import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solveProofOfWork } from "../src/features/captcha/proof-of-work.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { client } from "./support/accounts.ts";
import { linkIn, type MailServer, startMailServer } from "./support/mail.ts";

let t: TestApp;
let mail: MailServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ SMTP_URL: mail.url, FLOTILLA_PUBLIC_URL: "https://console.example.com" });
  api = client(t);
});
afterAll(async () => {
  await t.close();
  await mail.close();
});

const requestReset = (email: string) =>
  api.post(`/password-reset-path/${encodeURIComponent(email)}`, { "g-recaptcha-response": "" });

/** Asks for a reset mail and returns the code of its link. */
async function resetCode(email: string) {
  expect((await requestReset(email)).status).toBe(200);
  const received = await mail.next(email);
  expect(received.subject).toBe("Reset your password");
  const link = linkIn(received);
  expect(link).toMatch(/^https:\/\/console\.example\.com\/user\/reset-password\/[\w-]+$/);
  return link.split("/").pop() ?? "";
}

const reset = (body: Record<string, unknown>) => api.post("/user/reset-password", body);

describe("password reset", () => {
  it("mails a link whose code sets a new password once and ends every session", async () => {
    const { user, token } = await t.factories.user({ email: "reset@example.com" });
    await t.db.query('UPDATE "user" SET is_verified = false WHERE id = $1', [user.id]);
    const code = await resetCode("RESET@example.com");
    const done = await reset({ code, password: "brand-new-password" });
    expect([done.status, done.json]).toEqual([200, { success: true }]);
    expect((await api.get("/actor/v1/whoami", token)).status).toBe(401);
    expect((await api.post("/login_", { username: "reset@example.com", password: "brand-new-password" })).status).toBe(
      200,
    );
    // The link reached the mailbox: the address is verified.
    const { rows } = await t.db.query('SELECT is_verified FROM "user" WHERE id = $1', [user.id]);
    expect(rows).toEqual([{ is_verified: true }]);
    const again = await reset({ code, password: "another-password" });
    expect([again.status, again.json]).toEqual([
      400,
      { code: "reset_code_invalid", errorCode: 4, message: "reset code invalid" },
    ]);
  });

  it("answers 200 for an unknown email and sends nothing (no enumeration)", async () => {
    const response = await requestReset("nobody@example.com");
    expect([response.status, response.text]).toEqual([200, "OK"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mail.to("nobody@example.com")).toEqual([]);
  });

  it("answers error 3 for an expired code and 4 for an unknown one", async () => {
    await t.factories.user({ email: "expired@example.com" });
    const code = await resetCode("expired@example.com");
    await t.db.query("UPDATE user_token SET expires_at = now() - interval '1 second' WHERE kind = 'password_reset'");
    const expired = await reset({ code, password: "brand-new-password" });
    expect([expired.status, expired.json]).toEqual([
      400,
      { code: "reset_code_expired", errorCode: 3, message: "reset code expired" },
    ]);
    const unknown = await reset({ code: "made-up", password: "brand-new-password" });
    expect(unknown.json).toMatchObject({ code: "reset_code_invalid", errorCode: 4 });
  });

  it("a newer link replaces the earlier one", async () => {
    await t.factories.user({ email: "twice@example.com" });
    const first = await resetCode("twice@example.com");
    const second = await resetCode("twice@example.com");
    expect((await reset({ code: first, password: "brand-new-password" })).json?.errorCode).toBe(4);
    expect((await reset({ code: second, password: "brand-new-password" })).status).toBe(200);
  });

  it.each([
    [{ password: "brand-new-password" }, "code: Code is required"],
    [{ code: "x" }, "password: Password is required"],
    [{ code: "x", password: "short" }, "password: Password must be at least 8 characters"],
    [{ code: "x", password: "p".repeat(65) }, "password: Password must be at most 64 characters"],
  ])("refuses %j", async (body, message) => {
    const response = await reset(body);
    expect([response.status, response.json]).toEqual([400, { code: "bad_request", message }]);
  });

  it("refuses a request for something that is not an email", async () => {
    const response = await requestReset("not-an-email");
    expect([response.status, response.json]).toEqual([
      400,
      { code: "bad_request", message: "Please enter a valid email address" },
    ]);
  });

  it("needs a valid TOTP code when the user has two-factor: errors 1 and 2", async () => {
    const { user, token } = await t.factories.user({ email: "tfa@example.com" });
    const secret = (await api.get("/auth/totp/setup", token)).text;
    const now = Math.floor(Date.now() / 1000);
    expect((await api.post("/auth/totp/verify", { code: await generate({ secret, epoch: now }) }, token)).status).toBe(
      200,
    );
    const code = await resetCode("tfa@example.com");
    const missing = await reset({ code, password: "brand-new-password" });
    expect([missing.status, missing.json]).toEqual([
      400,
      { code: "two_factor_code_required", errorCode: 1, message: "code required" },
    ]);
    const right = await generate({ secret, epoch: now + 30 });
    const wrong = await reset({
      code,
      password: "brand-new-password",
      twoFactorCode: right === "000000" ? "111111" : "000000",
    });
    expect([wrong.status, wrong.json]).toEqual([
      400,
      { code: "two_factor_code_invalid", errorCode: 2, message: "code invalid" },
    ]);
    const done = await reset({ code, password: "brand-new-password", twoFactorCode: right });
    expect(done.status).toBe(200);
    const { rows } = await t.db.query('SELECT totp_secret IS NOT NULL AS on FROM "user" WHERE id = $1', [user.id]);
    expect(rows).toEqual([{ on: true }]);
  });
});

describe("password reset limits", () => {
  it("allows 3 mails per email an hour, then 429 with Retry-After and a text", async () => {
    await t.factories.user({ email: "limited@example.com" });
    for (let i = 0; i < 3; i++) expect((await requestReset("limited@example.com")).status).toBe(200);
    const limited = await requestReset("Limited@example.com");
    expect([limited.status, limited.json]).toEqual([
      429,
      { code: "too_many_requests", message: "Too many password reset requests for this email." },
    ]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(3500);
  });

  it("allows 10 requests per client address an hour", async () => {
    const fresh = await createTestApp();
    try {
      const own = client(fresh);
      for (let i = 0; i < 10; i++)
        expect((await own.post(`/password-reset-path/a${i}@example.com`, {})).status).toBe(200);
      const limited = await own.post("/password-reset-path/b@example.com", {});
      expect([limited.status, limited.json?.message]).toEqual([
        429,
        "Too many password reset requests from your address.",
      ]);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await fresh.close();
    }
  });

  it("needs the captcha when one is configured", async () => {
    const pow = await createTestApp({ FLOTILLA_CAPTCHA: "pow" });
    try {
      const own = client(pow);
      const missing = await own.post("/password-reset-path/someone@example.com", {});
      expect([missing.status, missing.json?.message]).toEqual([
        400,
        "g-recaptcha-response: a captcha response is required",
      ]);
      const { challenge } = (await own.get("/auth/v1/captcha")).json as { challenge: string };
      const solved = await own.post("/password-reset-path/someone@example.com", {
        "g-recaptcha-response": solveProofOfWork(challenge),
      });
      expect(solved.status).toBe(200);
    } finally {
      await pow.close();
    }
  });
});
