import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTwoFactorSecrets } from "../src/features/account/two-factor.ts";
import { lockDurationText } from "../src/features/auth/login-throttle.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf } from "./support/accounts.ts";
import { linkIn, type MailServer, startMailServer } from "./support/mail.ts";

/**
 * Failed logins are counted per account (the user, whether named by email or username) and per
 * address. An attacker's failures lock the attacker out of the account, not its owner: a right
 * password from an address that has not failed still logs in. The clients are told apart by
 * X-Forwarded-For from a trusted proxy (FLOTILLA_TRUST_PROXY). A lock says how long it lasts, and
 * the owner gets through it with a second factor, or after a password reset (security review 3).
 */
let t: TestApp;
let mail: MailServer;
beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ FLOTILLA_TRUST_PROXY: "127.0.0.1", SMTP_URL: mail.url });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const ATTACKER = "203.0.113.66";
const VICTIM = "198.51.100.20";
const SPEC_TEXT = "Too Many Requests. Try again later.";

async function login(from: string, username: string, password: string, twoFactorCode?: string) {
  const response = await fetch(`${t.url}/login_`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify({ username, password, ...(twoFactorCode === undefined ? {} : { twoFactorCode }) }),
  });
  return { status: response.status, text: await response.text(), retryAfter: response.headers.get("retry-after") };
}

/** Ten wrong passwords for the account from `from`: the account is then locked to that address. */
async function lockOut(from: string, username: string) {
  for (let i = 0; i < 10; i++) expect((await login(from, username, "wrong-password")).status).toBe(401);
}

/** The TOTP code of `steps` periods from now (the server accepts one period of drift either way). */
const totp = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 * steps });
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

describe("login throttle", () => {
  it("locks the attacker's address out of the account, by email or username, and lets the owner in", async () => {
    const { user, password } = await t.factories.user();
    const email = user.email ?? "";
    await lockOut(ATTACKER, email);

    // The same account by its username is the same counter; even the right password is refused.
    const byName = await login(ATTACKER, user.username, "wrong-password");
    expect(byName.status).toBe(429);
    expect(JSON.parse(byName.text)).toEqual({
      code: "too_many_requests",
      message: `${SPEC_TEXT} Try again in 15 minutes.`,
    });
    expect(Number(byName.retryAfter)).toBeGreaterThan(800);
    expect((await login(ATTACKER, user.username, password)).status).toBe(429);
    expect((await login(ATTACKER, email.toUpperCase(), password)).status).toBe(429);

    // The owner, from an address that has not failed, logs in.
    const owner = await login(VICTIM, email, password);
    expect(owner.status).toBe(200);
    expect(owner.text.split(".")).toHaveLength(3);
    // And the attacker is still locked out.
    expect((await login(ATTACKER, email, password)).status).toBe(429);
  });

  it("gives a fresh address one guess while the account is under attack", async () => {
    const { user, password } = await t.factories.user();
    for (let i = 0; i < 10; i++) expect((await login("203.0.113.70", user.username, "wrong")).status).toBe(401);
    expect((await login("203.0.113.71", user.username, "wrong")).status).toBe(401);
    expect((await login("203.0.113.71", user.username, password)).status).toBe(429);
  });

  it("says how long the lock lasts, after the spec's sentence", () => {
    expect(lockDurationText(900)).toBe("Try again in 15 minutes.");
    expect(lockDurationText(841)).toBe("Try again in 15 minutes.");
    expect(lockDurationText(61)).toBe("Try again in 2 minutes.");
    expect(lockDurationText(60)).toBe("Try again in 1 minute.");
    expect(lockDurationText(59)).toBe("Try again in 59 seconds.");
    expect(lockDurationText(1)).toBe("Try again in 1 second.");
  });

  it("lets the right password and a right second factor through the lock, and nothing less", async () => {
    const SHARED = "203.0.113.100";
    const { user, password } = await t.factories.user();
    await setTwoFactorSecrets(t.db.orm, user.id, { totp_secret: SECRET });
    // The owner's own address is locked (ten typos, or an attacker behind the same address).
    await lockOut(SHARED, user.username);
    const locked = await login(SHARED, user.username, password);
    expect(locked.status).toBe(429);
    const lockText = JSON.parse(locked.text) as { message: string };
    expect(lockText.message).toMatch(/^Too Many Requests\. Try again later\. Try again in \d+ minutes?\.$/);

    // Anything short of both is the same 429: the lock tells nothing of the password or the account.
    const code = await totp(SECRET);
    const wrongCode = code === "000000" ? "111111" : "000000";
    for (const [pass, twoFactorCode] of [
      [password, wrongCode],
      ["wrong-password", code],
      [password, "12"],
    ] as const) {
      const answer = await login(SHARED, user.username, pass, twoFactorCode);
      expect([answer.status, JSON.parse(answer.text).message]).toEqual([429, lockText.message]);
    }

    // Both right: a session whose second factor is passed.
    const through = await login(SHARED, user.username, password, code);
    expect(through.status, through.text).toBe(200);
    expect(claimsOf(through.text)).toMatchObject({ id: user.id, twoFactorRequired: false });
    // The address's failures on the account are forgiven: the next login is an ordinary one.
    const next = await login(SHARED, user.username, password);
    expect(next.status).toBe(200);
    expect(claimsOf(next.text).twoFactorRequired).toBe(true);
    // A code does not open the lock of an account without two-factor.
    const plain = await t.factories.user();
    await lockOut("203.0.113.80", plain.user.username);
    expect((await login("203.0.113.80", plain.user.username, plain.password, "123456")).status).toBe(429);
  });

  it("lets a second factor through an address's own lock too", async () => {
    const from = "203.0.113.90";
    for (let i = 0; i < 20; i++) expect((await login(from, `nobody-${i}@example.com`, "guess")).status).toBe(401);
    const { user, password } = await t.factories.user();
    await setTwoFactorSecrets(t.db.orm, user.id, { totp_secret: SECRET });
    const locked = await login(from, user.username, password);
    expect([locked.status, JSON.parse(locked.text).message]).toEqual([
      429,
      expect.stringMatching(/^Too many failed logins from your address\. Try again later\. Try again in 15 minutes\.$/),
    ]);
    const through = await login(from, user.username, password, await totp(SECRET));
    expect(through.status, through.text).toBe(200);
  });

  it("lifts the account's locks once the owner completes a password reset", async () => {
    const { user } = await t.factories.user({ email: "locked-out@example.com" });
    await lockOut("203.0.113.110", user.username);
    // Once the account is under attack, one failure closes it to another address (the owner's) too.
    expect((await login("198.51.100.30", user.username, "wrong-password")).status).toBe(401);
    const reset = await fetch(`${t.url}/password-reset-path/locked-out%40example.com`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.30" },
      body: JSON.stringify({ "g-recaptcha-response": "" }),
    });
    expect(reset.status).toBe(200);
    const code =
      linkIn(await mail.next("locked-out@example.com"))
        .split("/")
        .pop() ?? "";
    // Asking for the mail is not enough: the lock stands until the reset is done.
    expect((await login("198.51.100.30", user.username, "wrong-password")).status).toBe(429);
    const done = await fetch(`${t.url}/user/reset-password`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.30" },
      body: JSON.stringify({ code, password: "a-brand-new-password" }),
    });
    expect(done.status).toBe(200);
    expect((await login("198.51.100.30", user.username, "a-brand-new-password")).status).toBe(200);
    expect((await login("203.0.113.110", user.username, "a-brand-new-password")).status).toBe(200);
  });
});
