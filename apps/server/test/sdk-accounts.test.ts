import { getSdk } from "balena-sdk";
import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf } from "./support/accounts.ts";
import { linkIn, type MailServer, startMailServer } from "./support/mail.ts";

let t: TestApp;
let mail: MailServer;
beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ SMTP_URL: mail.url });
});
afterAll(async () => {
  await t.close();
  await mail.close();
});

const newSdk = () => getSdk({ apiUrl: t.url, dataDirectory: false });

describe("balena-sdk account calls", () => {
  it("auth.register, auth.verifyEmail and auth.requestVerificationEmail", async () => {
    const sdk = newSdk();
    const token = await sdk.auth.register({ email: "sdk@example.com", password: "a-good-password" });
    await sdk.auth.loginWithToken(token);
    const link = linkIn(await mail.next("sdk@example.com"));
    const [, verificationToken, email] = /\/user\/verify-email\/([^/]+)\/(.+)$/.exec(link) ?? [];

    // Resend (debounced: the sign-up mail went out just now, so nothing new is sent, and no error).
    await sdk.auth.requestVerificationEmail();
    await t.db.query("UPDATE user_token SET created_at = now() - interval '2 minutes'");
    await sdk.auth.requestVerificationEmail();
    const resent = await mail.next("sdk@example.com");
    expect(linkIn(resent)).not.toBe(link);

    const fresh = await newSdk().auth.verifyEmail({
      email: decodeURIComponent(email ?? ""),
      token: verificationToken ?? "",
    });
    expect(claimsOf(fresh)).toMatchObject({ email: "sdk@example.com" });
    await expect(
      newSdk().auth.verifyEmail({ email: "sdk@example.com", token: verificationToken ?? "" }),
    ).rejects.toMatchObject({ statusCode: 400 });
    const { rows } = await t.db.query('SELECT is_verified FROM "user" WHERE email = $1', ["sdk@example.com"]);
    expect(rows).toEqual([{ is_verified: true }]);
  });

  it("auth.twoFactor: getSetupKey, enable, isEnabled/isPassed, login challenge, disable", async () => {
    const { user, password } = await t.factories.user();
    const sdk = newSdk();
    await sdk.auth.login({ email: user.email ?? "", password });
    expect(await sdk.auth.twoFactor.isEnabled()).toBe(false);
    const secret = await sdk.auth.twoFactor.getSetupKey();
    const now = Math.floor(Date.now() / 1000);
    await sdk.auth.twoFactor.enable(await generate({ secret, epoch: now }));
    expect(await sdk.auth.twoFactor.isEnabled()).toBe(true);
    expect(await sdk.auth.twoFactor.isPassed()).toBe(true);

    const second = newSdk();
    await second.auth.login({ email: user.email ?? "", password });
    expect(await second.auth.twoFactor.isEnabled()).toBe(true);
    expect(await second.auth.twoFactor.isPassed()).toBe(false);
    await expect(second.models.application.getAll()).rejects.toMatchObject({ statusCode: 401 });
    await second.auth.twoFactor.challenge(await generate({ secret, epoch: now + 30 }));
    expect(await second.auth.twoFactor.isPassed()).toBe(true);
    expect(await second.models.application.getAllDirectlyAccessible()).toEqual([]);

    await second.auth.twoFactor.disable(password);
    expect(await second.auth.twoFactor.isEnabled()).toBe(false);
    const third = newSdk();
    await third.auth.login({ email: user.email ?? "", password });
    expect(await third.auth.twoFactor.isEnabled()).toBe(false);
  });

  it("deletes the account with pine DELETE user after re-authenticating", async () => {
    const { user, password } = await t.factories.user();
    const sdk = newSdk();
    await sdk.auth.login({ email: user.email ?? "", password });
    const renewed = await sdk.request.send({
      method: "POST",
      url: "/user/v1/refresh-token",
      baseUrl: t.url,
      body: { password },
    });
    await sdk.auth.loginWithToken(renewed.body as string);
    await sdk.pine.delete({ resource: "user", id: user.id });
    expect(await sdk.auth.isLoggedIn()).toBe(false);
  });
});
