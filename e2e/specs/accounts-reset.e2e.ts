import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { startMailServer } from "../support/mail.ts";
import { logIn, shot } from "./accounts-helpers.ts";
import { DEMO, submittedTo } from "./web-helpers.ts";

/**
 * Password reset and sign-up with the built-in proof-of-work captcha (FLOTILLA_CAPTCHA=pow):
 * the browser solves the server's challenge, the reset link comes by mail (spec 1 §2.1, §2.3, §5, §7).
 */
describe("accounts: password reset and the proof-of-work captcha", () => {
  let mail: Awaited<ReturnType<typeof startMailServer>>;
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const resetLink = /https?:\/\/[^\s"<>]+\/user\/reset-password\/[^\s"<>]+/;

  beforeAll(async () => {
    mail = await startMailServer();
    flotilla = await startFlotilla({ SMTP_URL: mail.url, FLOTILLA_CAPTCHA: "pow" });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    await mail?.stop();
  });

  it("requests a reset mail after the captcha is solved", async () => {
    await page.goto(url("/login"));
    await page.getByRole("link", { name: "Forgot password?" }).click();
    await page.waitForURL(url("/password-reset"));
    await page.getByRole("heading", { name: "Reset your password" }).waitFor();
    await page.getByRole("button", { name: "Send reset link" }).click();
    await page.getByText("Email is required").waitFor();
    await page.getByRole("status", { name: "Captcha" }).getByText("Captcha complete").waitFor({ timeout: 30_000 });
    await shot(page, "password-reset");
    await page.getByLabel("Email", { exact: true }).fill(DEMO.email);
    await page.getByRole("button", { name: "Send reset link" }).click();
    await page.waitForURL(url("/password-reset/success"));
    await page.getByRole("heading", { name: "Check your email" }).waitFor();
    await shot(page, "password-reset-success");
  });

  it("sets a new password through the mailed link; the confirmation must match", async () => {
    const link = await mail.waitForLink(DEMO.email, resetLink);
    await page.goto(link);
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await page.getByLabel("New password", { exact: true }).fill("brand-new-pass-1");
    await page.getByLabel("Confirm new password").fill("brand-new-pass-2");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Passwords don't match").waitFor();
    await shot(page, "reset-password-form");
    await page.getByLabel("Confirm new password").fill("brand-new-pass-1");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.waitForURL(url("/login"));
    await page.getByText("Your password has been changed. Log in with the new one.").waitFor();

    // The link works once.
    await page.goto(link);
    await page.getByLabel("New password", { exact: true }).fill("another-pass-1");
    await page.getByLabel("Confirm new password").fill("another-pass-1");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(/Reset code (invalid|expired)\./);

    await logIn(page, flotilla.dashboardUrl, DEMO.email, "brand-new-pass-1");
    await page.waitForURL(url("/fleets"));
  });

  it("reads the code from the URL hash when the path says 'code'", async () => {
    await page.getByRole("button", { name: "Account menu" }).click();
    await page.getByRole("menuitem", { name: "Log out" }).click();
    await page.waitForURL(url("/login"));
    const before = mail.mails.length;
    await page.goto(url("/password-reset"));
    await page.getByText("Captcha complete").waitFor({ timeout: 30_000 });
    await page.getByLabel("Email", { exact: true }).fill(DEMO.email);
    await page.getByRole("button", { name: "Send reset link" }).click();
    await page.waitForURL(url("/password-reset/success"));
    const deadline = Date.now() + 20_000;
    while (mail.mails.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const code = new URL(await mail.waitForLink(DEMO.email, resetLink)).pathname.split("/").pop() ?? "";
    await page.goto(url(`/user/reset-password/code#${code}`));
    await page.getByLabel("New password", { exact: true }).fill("hash-pass-123");
    await page.getByLabel("Confirm new password").fill("hash-pass-123");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.waitForURL(url("/login"));
    await logIn(page, flotilla.dashboardUrl, DEMO.email, "hash-pass-123");
    await page.waitForURL(url("/fleets"));
  });

  it("signs up with the proof-of-work captcha", { timeout: 120_000 }, async () => {
    await page.getByRole("button", { name: "Account menu" }).click();
    await page.getByRole("menuitem", { name: "Log out" }).click();
    await page.waitForURL(url("/login"));
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.waitForURL(url("/signup"));
    await page.getByLabel("Email", { exact: true }).fill(`pow.${Date.now()}@example.com`);
    await page.getByLabel("Password", { exact: true }).fill("pow-password-1");
    await page.getByText("Captcha complete").waitFor({ timeout: 30_000 });
    await shot(page, "signup-captcha");
    await page.getByRole("button", { name: "Create account" }).click();
    await submittedTo(page, url("/user/verify-email/pending"));
  });
});
