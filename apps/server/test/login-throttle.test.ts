import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Failed logins are counted per account (the user, whether named by email or username) and per
 * address. An attacker's failures lock the attacker out of the account, not its owner: a right
 * password from an address that has not failed still logs in. The clients are told apart by
 * X-Forwarded-For from a trusted proxy (FLOTILLA_TRUST_PROXY).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ FLOTILLA_TRUST_PROXY: "127.0.0.1" });
});
afterAll(async () => {
  await t?.close();
});

const ATTACKER = "203.0.113.66";
const VICTIM = "198.51.100.20";

async function login(from: string, username: string, password: string) {
  const response = await fetch(`${t.url}/login_`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify({ username, password }),
  });
  return { status: response.status, text: await response.text(), retryAfter: response.headers.get("retry-after") };
}

describe("login throttle", () => {
  it("locks the attacker's address out of the account, by email or username, and lets the owner in", async () => {
    const { user, password } = await t.factories.user();
    const email = user.email ?? "";
    for (let i = 0; i < 10; i++) expect((await login(ATTACKER, email, "wrong-password")).status).toBe(401);

    // The same account by its username is the same counter; even the right password is refused.
    const byName = await login(ATTACKER, user.username, "wrong-password");
    expect(byName.status).toBe(429);
    expect(JSON.parse(byName.text)).toEqual({
      code: "too_many_requests",
      message: "Too Many Requests. Try again later.",
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
});
