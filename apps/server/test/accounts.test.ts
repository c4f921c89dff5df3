import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMailer } from "../src/features/mail/mailer.ts";
import { verificationMail } from "../src/features/mail/templates.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf, client, MINUTE, withClockOffset } from "./support/accounts.ts";
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

const register = (body: Record<string, unknown>) => api.post("/user/register", body);

/** Signs up and returns the token and the verification link's token. */
async function signUp(email: string, password = "a-good-password") {
  const response = await register({ email, password });
  expect(response.status).toBe(200);
  const link = linkIn(await mail.next(email));
  const [, token, encodedEmail] = /\/user\/verify-email\/([^/]+)\/(.+)$/.exec(link) ?? [];
  return { token: response.text, verificationToken: token ?? "", encodedEmail: encodedEmail ?? "", link };
}

describe("registration", () => {
  it("creates the user and a personal organization it administers, and mails a verification link", async () => {
    const { token, link, verificationToken, encodedEmail } = await signUp("Mia.Rossi+test@example.com");
    expect(claimsOf(token)).toMatchObject({ email: "Mia.Rossi+test@example.com" });
    expect(claimsOf(token)).not.toHaveProperty("twoFactorRequired");
    expect(link.startsWith("https://console.example.com/user/verify-email/")).toBe(true);
    expect(decodeURIComponent(encodedEmail)).toBe("Mia.Rossi+test@example.com");
    expect(verificationToken.length).toBeGreaterThanOrEqual(32);
    const { rows } = await t.db.query<{ name: string; handle: string; role: string }>(
      `SELECT o.name, o.handle, r.name AS role FROM "organization" o
         JOIN "organization_membership" m ON m.is_member_of__organization = o.id
         JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
         JOIN "user" u ON u.id = m.user WHERE u.email = $1`,
      ["Mia.Rossi+test@example.com"],
    );
    expect(rows).toEqual([{ name: "mia_rossi_test", handle: "mia_rossi_test", role: "administrator" }]);
    // The token is stored hashed, never as sent.
    const stored = await t.db.query("SELECT 1 FROM user_token WHERE token_hash = $1", [verificationToken]);
    expect(stored.rows).toEqual([]);
  });

  it("makes the personal organization's handle unique", async () => {
    await t.factories.organization({ name: "kai" });
    await signUp("kai@example.com");
    const { rows } = await t.db.query<{ handle: string }>(
      `SELECT o.handle FROM "organization" o JOIN "organization_membership" m ON m.is_member_of__organization = o.id
         JOIN "user" u ON u.id = m.user WHERE u.email = 'kai@example.com'`,
    );
    expect(rows).toEqual([{ handle: "kai1" }]);
  });

  it("sends the mail as text and HTML with the same link", async () => {
    await register({ email: "html@example.com", password: "a-good-password" });
    const received = await mail.next("html@example.com");
    expect(received.subject).toBe("Verify your email address");
    expect(received.from).toBe("no-reply@console.example.com");
    expect(received.html).toContain(`href="${linkIn(received)}"`);
    expect(received.text).toContain("valid for 24 hours");
  });

  it.each([
    [{ password: "a-good-password" }, "email: Email is required"],
    [{ email: "", password: "a-good-password" }, "email: Email is required"],
    [{ email: "not-an-email", password: "a-good-password" }, "email: Please enter a valid email address"],
    [{ email: "x@example.com" }, "password: Password is required"],
    [{ email: "x@example.com", password: "1234567" }, "password: Password must be at least 8 characters"],
    [{ email: "x@example.com", password: "x".repeat(65) }, "password: Password must be at most 64 characters"],
    [
      { email: "x@example.com", password: "a-good-password", username: "x" },
      'The request body has an unknown field: "username".',
    ],
    [
      { email: "x@example.com", password: "a-good-password", invitation_type: "team", invitation_token: "t" },
      'invitation_type: must be "organization" or "application"',
    ],
    [
      { email: "x@example.com", password: "a-good-password", invitation_type: "organization" },
      "invitation_token: invitation_type and invitation_token go together",
    ],
    [
      { email: "x@example.com", password: "a-good-password", has_disabled_newsletter: "yes" },
      "has_disabled_newsletter: must be true or false",
    ],
  ])("refuses %j", async (body, message) => {
    const response = await register(body);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ code: "bad_request", message });
  });

  it("accepts passwords of exactly 8 and 64 characters, the newsletter opt-out and an invitation", async () => {
    expect((await register({ email: "eight@example.com", password: "12345678" })).status).toBe(200);
    const response = await register({
      email: "sixtyfour@example.com",
      password: "y".repeat(64),
      has_disabled_newsletter: true,
      invitation_type: "organization",
      invitation_token: "abc",
    });
    expect(response.status).toBe(200);
    const { rows } = await t.db.query('SELECT has_disabled_newsletter FROM "user" WHERE email = $1', [
      "sixtyfour@example.com",
    ]);
    expect(rows).toEqual([{ has_disabled_newsletter: true }]);
  });
});

describe("email verification", () => {
  it("verifies with the mailed token and answers a fresh session token", async () => {
    const { verificationToken, encodedEmail } = await signUp("verify@example.com");
    const response = await api.post("/user/v1/verify-email", {
      verificationToken,
      email: decodeURIComponent(encodedEmail),
    });
    expect(response.status).toBe(200);
    expect(claimsOf(response.text)).toMatchObject({ email: "verify@example.com" });
    const { rows } = await t.db.query('SELECT is_verified, must_be_verified FROM "user" WHERE email = $1', [
      "verify@example.com",
    ]);
    expect(rows).toEqual([{ is_verified: true, must_be_verified: true }]);
    // Single use.
    const again = await api.post("/user/v1/verify-email", { verificationToken, email: "verify@example.com" });
    expect(again.status).toBe(400);
  });

  it("answers the spec's text for an unknown token, another email, and an expired token", async () => {
    const expected = { code: "email_verification_invalid", message: "email verification link invalid or expired" };
    const { verificationToken } = await signUp("expire@example.com");
    const unknown = await api.post("/user/v1/verify-email", { verificationToken: "nope", email: "expire@example.com" });
    expect([unknown.status, unknown.json]).toEqual([400, expected]);
    const other = await api.post("/user/v1/verify-email", { verificationToken, email: "other@example.com" });
    expect([other.status, other.json]).toEqual([400, expected]);
    await t.db.query(
      `UPDATE user_token SET expires_at = now() - interval '1 second'
        WHERE "user" = (SELECT id FROM "user" WHERE email = 'expire@example.com')`,
    );
    const expired = await api.post("/user/v1/verify-email", { verificationToken, email: "expire@example.com" });
    expect([expired.status, expired.json]).toEqual([400, expected]);
    const missing = await api.post("/user/v1/verify-email", { email: "expire@example.com" });
    expect(missing.json).toEqual({ code: "bad_request", message: "verificationToken: is required" });
  });

  it("resends at most once a minute (later requests succeed without a mail)", async () => {
    const { token } = await signUp("resend@example.com");
    // The sign-up mail was just sent: the first resend within the minute sends nothing.
    expect((await api.post("/user/v1/verification-email", undefined, token)).status).toBe(200);
    await t.db.query(
      `UPDATE user_token SET created_at = now() - interval '61 seconds'
        WHERE "user" = (SELECT id FROM "user" WHERE email = 'resend@example.com')`,
    );
    expect((await api.post("/user/v1/verification-email", undefined, token)).status).toBe(200);
    expect((await api.post("/user/v1/verification-email", undefined, token)).status).toBe(200);
    await mail.next("resend@example.com");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mail.to("resend@example.com")).toHaveLength(2);
  });

  it("resends through PATCH /v7/user(id) {has_been_sent_verification_email: true}, for oneself only", async () => {
    const { token } = await signUp("patch@example.com");
    const { id } = claimsOf(token) as { id: number };
    await t.db.query(`UPDATE user_token SET created_at = now() - interval '2 minutes' WHERE "user" = $1`, [id]);
    const response = await api.patch(`/v7/user(${id})`, { has_been_sent_verification_email: true }, token);
    expect(response.status).toBe(200);
    await mail.next("patch@example.com");
    const someone = await t.factories.user();
    const refused = await api.patch(`/v7/user(${someone.user.id})`, { has_been_sent_verification_email: true }, token);
    expect(refused.status).toBe(401);
  });

  it("sends the verification mail in optional mode too, without requiring it", async () => {
    const optional = await createTestApp({ SMTP_URL: mail.url, FLOTILLA_EMAIL_VERIFICATION: "optional" });
    try {
      const response = await client(optional).post("/user/register", {
        email: "optional@example.com",
        password: "a-good-password",
      });
      expect(response.status).toBe(200);
      expect(linkIn(await mail.next("optional@example.com"))).toContain("/user/verify-email/");
      const { rows } = await optional.db.query('SELECT must_be_verified, is_verified FROM "user"');
      expect(rows).toEqual([{ must_be_verified: false, is_verified: false }]);
    } finally {
      await optional.close();
    }
  });
});

describe("profile", () => {
  it("saves first_name, last_name, company and account_type", async () => {
    const { token } = await t.factories.user();
    const profile = { first_name: "Ada", last_name: "Lovelace", company: "Engines", account_type: "professional" };
    const response = await api.patch("/user/profile", profile, token);
    expect([response.status, response.json]).toEqual([200, profile]);
  });

  it.each([
    ["first_name", "", "first_name: First name is required"],
    ["last_name", "  ", "last_name: Last name is required"],
    ["company", undefined, "company: Company is required"],
    ["account_type", "hobby", "account_type: Account type is required"],
  ])("refuses %s = %j", async (field, value, message) => {
    const { token } = await t.factories.user();
    const profile: Record<string, unknown> = {
      first_name: "A",
      last_name: "B",
      company: "C",
      account_type: "personal",
    };
    profile[field] = value;
    const response = await api.patch("/user/profile", profile, token);
    expect([response.status, response.json]).toEqual([400, { code: "bad_request", message }]);
  });

  it("needs a session", async () => {
    expect((await api.patch("/user/profile", {})).status).toBe(401);
  });
});

describe("password change", () => {
  it("needs the current password, ends every other session and keeps this one", async () => {
    const { user, token, password } = await t.factories.user();
    const other = await t.ctx.tokens.start(user);
    const wrong = await api.patch(
      "/user/password",
      { currentPassword: "wrong-password", password: "new-password-1" },
      token,
    );
    expect([wrong.status, wrong.json]).toEqual([
      401,
      { code: "invalid_password", message: "The password is not correct." },
    ]);
    expect((await api.get("/actor/v1/whoami", other)).status).toBe(200);

    const response = await api.patch(
      "/user/password",
      { currentPassword: password, password: "new-password-1" },
      token,
    );
    expect(response.status).toBe(200);
    expect(claimsOf(response.text).session).toBe(claimsOf(token).session);
    expect((await api.get("/actor/v1/whoami", response.text)).status).toBe(200);
    const ended = await api.get("/actor/v1/whoami", other);
    expect([ended.status, ended.json?.message]).toEqual([401, "Your session has expired."]);
    const login = await api.post("/login_", { username: user.email, password: "new-password-1" });
    expect(login.status).toBe(200);
  });

  it.each([
    [{ password: "new-password-1" }, "currentPassword: Current password is required"],
    [{ currentPassword: "x" }, "password: Password is required"],
    [{ currentPassword: "x", password: "short" }, "password: Password must be at least 8 characters"],
    [{ currentPassword: "x", password: "z".repeat(65) }, "password: Password must be at most 64 characters"],
  ])("refuses %j", async (body, message) => {
    const { token } = await t.factories.user();
    const response = await api.patch("/user/password", body, token);
    expect([response.status, response.json]).toEqual([400, { code: "bad_request", message }]);
  });
});

describe("freshness (authTime older than 20 minutes)", () => {
  it("refuses sensitive actions with auth_expired until the password is entered again", async () => {
    const { user, password } = await t.factories.user();
    const stale = await withClockOffset(-21 * MINUTE, () => t.ctx.tokens.start(user));
    const expired = {
      code: "auth_expired",
      message: "Authentication expired: this action needs a recent sign-in, enter your password again.",
    };
    const change = await api.patch("/user/password", { currentPassword: password, password: "new-password-1" }, stale);
    expect([change.status, change.json]).toEqual([403, expired]);
    const email = await api.patch("/user/email", { email: "n@example.com", password }, stale);
    expect([email.status, email.json]).toEqual([403, expired]);
    const key = await api.post("/api-key/user/full", { name: "k", expiryDate: null }, stale);
    expect([key.status, key.json]).toEqual([403, expired]);
    const disable = await api.post("/auth/totp/disable", { password }, stale);
    expect([disable.status, disable.json]).toEqual([403, expired]);
    const codes = await api.post("/auth/v1/2fa-recover/create", undefined, stale);
    expect([codes.status, codes.json]).toEqual([403, expired]);
    const remove = await api.del(`/v7/user(${user.id})`, stale);
    expect([remove.status, remove.text]).toEqual([403, expired.message]);

    // 19 minutes is still fresh.
    const recent = await withClockOffset(-19 * MINUTE, () => t.ctx.tokens.start(user));
    expect(
      (
        await api.patch(
          "/user/profile",
          { first_name: "A", last_name: "B", company: "C", account_type: "personal" },
          recent,
        )
      ).status,
    ).toBe(200);

    const wrong = await api.post("/user/v1/refresh-token", { password: "not-it" }, stale);
    expect([wrong.status, wrong.json?.code]).toEqual([401, "invalid_password"]);
    const renewed = await api.post("/user/v1/refresh-token", { password }, stale);
    expect(renewed.status).toBe(200);
    expect(claimsOf(renewed.text).session).toBe(claimsOf(stale).session);
    expect(Date.now() - Number(claimsOf(renewed.text).authTime)).toBeLessThan(10_000);
    const retried = await api.patch(
      "/user/password",
      { currentPassword: password, password: "new-password-1" },
      renewed.text,
    );
    expect(retried.status).toBe(200);
  });

  it("never counts an API key as fresh", async () => {
    const { user, token, password } = await t.factories.user();
    await t.factories.organization({ admins: [user] });
    const key = await api.post("/api-key/user/full", { name: "k", expiryDate: null }, token);
    expect(key.status).toBe(200);
    const apiKey = JSON.parse(key.text) as string;
    const change = await api.patch("/user/password", { currentPassword: password, password: "new-password-1" }, apiKey);
    expect([change.status, change.json?.code]).toEqual([403, "auth_expired"]);
  });

  it("keeps GET /user/v1/refresh-token's authTime and answers 400 for a missing password", async () => {
    const { token } = await t.factories.user();
    const refreshed = await api.get("/user/v1/refresh-token", token);
    expect(claimsOf(refreshed.text).authTime).toBe(claimsOf(token).authTime);
    const missing = await api.post("/user/v1/refresh-token", {}, token);
    expect(missing.json).toEqual({ code: "bad_request", message: "password: Password is required" });
  });
});

describe("email change", () => {
  it("needs the password, refuses a taken address, and leaves the account unverified with a mail to the new one", async () => {
    const { token, password } = await t.factories.user({ email: "before@example.com" });
    await t.factories.user({ email: "taken@example.com" });
    const missing = await api.patch("/user/email", { email: "after@example.com" }, token);
    expect(missing.json).toEqual({ code: "bad_request", message: "password: Password is required" });
    const noEmail = await api.patch("/user/email", { password }, token);
    expect(noEmail.json).toEqual({ code: "bad_request", message: "email: Email is required" });
    const wrong = await api.patch("/user/email", { email: "after@example.com", password: "nope-nope" }, token);
    expect(wrong.status).toBe(401);
    const taken = await api.patch("/user/email", { email: "TAKEN@example.com", password }, token);
    expect([taken.status, taken.json]).toEqual([
      409,
      { code: "conflict", message: "This email is already registered." },
    ]);

    const changed = await api.patch("/user/email", { email: "after@example.com", password }, token);
    expect([changed.status, changed.json]).toEqual([
      200,
      { email: "after@example.com", is_verified: false, must_be_verified: true },
    ]);
    const link = linkIn(await mail.next("after@example.com"));
    const [, verificationToken] = /\/user\/verify-email\/([^/]+)\//.exec(link) ?? [];
    const verified = await api.post("/user/v1/verify-email", { verificationToken, email: "after@example.com" });
    expect(verified.status).toBe(200);
  });
});

describe("logout", () => {
  it("POST /logout ends the current session only; POST /logout-others ends the others", async () => {
    const { user, token } = await t.factories.user();
    const second = await t.ctx.tokens.start(user);
    const third = await t.ctx.tokens.start(user);
    expect((await api.post("/logout", undefined, second)).status).toBe(200);
    expect((await api.get("/actor/v1/whoami", second)).status).toBe(401);
    expect((await api.get("/actor/v1/whoami", token)).status).toBe(200);

    expect((await api.post("/logout-others", undefined, token)).status).toBe(200);
    expect((await api.get("/actor/v1/whoami", third)).status).toBe(401);
    expect((await api.get("/actor/v1/whoami", token)).status).toBe(200);
    expect((await api.post("/logout")).status).toBe(401);
  });
});

describe("login with a password longer than 64 characters", () => {
  it("still signs in (spec 1 §5: the dashboard then prompts a change)", async () => {
    const long = "L".repeat(80);
    const { user } = await t.factories.user({ password: long });
    const response = await api.post("/login_", { username: user.email, password: long });
    expect(response.status).toBe(200);
  });
});

describe("mail without SMTP_URL", () => {
  it("logs the link at info level", async () => {
    const lines: { object: object; message: string }[] = [];
    const log = { info: (object: object, message: string) => lines.push({ object, message }), error: () => {} };
    const mailer = createMailer({ smtpUrl: undefined, mailFrom: "x@example.com" }, t.db.orm, log);
    const content = verificationMail("https://d.example.com", "tok", "log@example.com", 24);
    expect(await mailer.send("log@example.com", content)).toBe(true);
    expect(lines).toEqual([
      {
        object: { to: "log@example.com", subject: "Verify your email address", link: content.link },
        message: `mail kept in the outbox (no SMTP_URL): ${content.link}`,
      },
    ]);
    expect(content.link).toBe("https://d.example.com/user/verify-email/tok/log%40example.com");
  });

  it("keeps the message in the outbox table with its link", async () => {
    const local = await createTestApp({ FLOTILLA_PUBLIC_URL: "https://local.example.com" });
    try {
      const response = await client(local).post("/user/register", {
        email: "outbox@example.com",
        password: "a-good-password",
      });
      expect(response.status).toBe(200);
      const { rows } = await local.db.query<{ recipient: string; subject: string; text: string; html: string }>(
        "SELECT recipient, subject, text, html FROM outbox_email",
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ recipient: "outbox@example.com", subject: "Verify your email address" });
      expect(rows[0]?.text).toMatch(/https:\/\/local\.example\.com\/user\/verify-email\/[\w-]+\/outbox%40example\.com/);
      expect(rows[0]?.html).toContain("https://local.example.com/user/verify-email/");
    } finally {
      await local.close();
    }
  });
});
