import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { startMailServer } from "../support/mail.ts";
import { freshTotp, logIn, logOutFromMenu, shot, sshPublicKey, type TotpSteps } from "./accounts-helpers.ts";
import { submittedTo } from "./web-helpers.ts";

/**
 * A new user's whole journey in Chromium against the real server (spec 1 §2–§5; issue 4 "Done
 * when"): sign up with the verification mail read from a real SMTP server, verify, complete the
 * profile, log out and in, enable 2FA with a TOTP computed here, log in with 2FA and with a
 * recovery code, add an SSH key and an API key, change the password (the other browser's
 * session ends), delete the account. The steps share one server, one browser and one tab.
 */
/**
 * Opens a mailed link. The dashboard server answers 404 for paths with a dot (it takes them for
 * files), and the verification link ends in the email address ("….com"): until the server sends
 * index.html for those, the link is opened through the dashboard's own router.
 */
async function openLink(page: Page, link: string) {
  const response = await page.goto(link);
  if (response?.status() !== 404) return;
  await page.goto(new URL("/login", link).toString());
  await page.evaluate((target) => {
    history.pushState({}, "", target);
    dispatchEvent(new PopStateEvent("popstate"));
  }, link);
}

describe("accounts: a new user's journey", () => {
  let mail: Awaited<ReturnType<typeof startMailServer>>;
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const email = `ann.${Date.now()}@example.com`;
  let password = "first-password-1";
  const newPassword = "second-password-2";
  let secret = "";
  let recoveryCodes: string[] = [];
  const totpSteps: TotpSteps = { last: 0 };
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;

  beforeAll(async () => {
    mail = await startMailServer();
    flotilla = await startFlotilla({ SMTP_URL: mail.url, FLOTILLA_EMAIL_VERIFICATION: "required" });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    await mail?.stop();
  });

  it("signs up: the email is pre-filled only when it looks like one, then the pending page", async () => {
    await page.goto(url("/signup?email=not-an-email"));
    await page.getByRole("heading", { name: "Create your Flotilla account" }).waitFor();
    expect(await page.getByLabel("Email", { exact: true }).inputValue()).toBe("");
    await page.goto(url(`/signup?email=${encodeURIComponent(email)}`));
    expect(await page.getByLabel("Email", { exact: true }).inputValue()).toBe(email);

    // The domain schema's messages before anything is sent.
    await page.getByLabel("Password", { exact: true }).fill("short");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByText("Password must be at least 8 characters").waitFor();
    await shot(page, "signup-errors");

    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByLabel("Don't send me the product newsletter").check();
    await page.getByRole("button", { name: "Create account" }).click();
    await submittedTo(page, url("/user/verify-email/pending"));
    await page.getByRole("heading", { name: "Check your email" }).waitFor();
    await page.getByText(email).waitFor();
    // No side menu on the verify-email pages (spec 1 §2.5).
    expect(await page.getByRole("navigation", { name: "Main navigation" }).count()).toBe(0);
    await shot(page, "verify-email-pending");

    // An unverified user is sent back to the pending page from any guarded page (spec 1 §2.2).
    await page.goto(url("/orgs"));
    await page.waitForURL(url("/user/verify-email/pending"));

    // A link the server does not know ends on the pending page saying so (spec 1 §8), not the generic issue.
    await page.goto(url("/user/verify-email/not-a-token/nobody%40example"));
    await page.waitForURL(url("/user/verify-email/pending?error=invalid"));
    await page.getByRole("alert").getByText("Email verification link invalid or expired.").waitFor();
    expect(await page.getByText("There was an issue verifying your email.", { exact: false }).count()).toBe(0);
    await shot(page, "verify-email-link-invalid");
  });

  it("resends the verification mail, verifies through the mailed link and completes the profile", async () => {
    await page.getByRole("button", { name: "Resend verification email" }).click();
    await page.getByText("Verification email sent. Check your inbox.").waitFor();

    const link = await mail.waitForLink(email, /https?:\/\/[^\s"<>]+\/user\/verify-email\/[^\s"<>]+/);
    await openLink(page, link);
    await page.waitForURL(url("/signup/profile"));
    await page.getByRole("heading", { name: "Tell us about yourself" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Main navigation" }).count()).toBe(0);

    await page.getByRole("button", { name: "Save and continue" }).click();
    await page.getByText("First name is required").waitFor();
    await page.getByText("Account type is required").waitFor();
    await shot(page, "signup-profile-errors");

    await page.getByLabel("First name").fill("Ann");
    await page.getByLabel("Last name").fill("Lee");
    await page.getByLabel("Company", { exact: true }).fill("Harbour Labs");
    await page.getByRole("radio", { name: /Professional/ }).check();
    await shot(page, "signup-profile");
    await page.getByRole("button", { name: "Save and continue" }).click();
    await page.waitForURL(url("/fleets"));
    await page.getByRole("heading", { name: "Fleets", level: 1 }).waitFor();
  });

  it("logs out and in again, landing on the last page visited", async () => {
    await page.goto(url("/orgs"));
    await page.getByRole("heading", { name: "Organizations", level: 1 }).waitFor();
    await logOutFromMenu(page);
    await logIn(page, flotilla.dashboardUrl, email, password);
    await page.waitForURL(url("/orgs"));
  });

  it("enables two-factor authentication with a code computed from the pairing code", async () => {
    await page.goto(url("/preferences/2fa"));
    await page.getByText("Two-factor authentication is off").waitFor();
    expect(await page.getByRole("navigation", { name: "Main navigation" }).count()).toBe(0);
    await page.getByRole("button", { name: "Enable two-factor authentication" }).click();
    const pairing = page.getByTestId("pairing-code");
    await pairing.waitFor();
    secret = ((await pairing.textContent()) ?? "").replace(/\s+/g, "");
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    await shot(page, "preferences-2fa-setup");

    await page.getByLabel("Code from the app").fill(await freshTotp(secret, totpSteps));
    await page.getByRole("button", { name: "Verify and enable" }).click();
    const list = page.getByRole("list", { name: "Save your recovery codes" });
    await list.waitFor();
    recoveryCodes = (await list.getByRole("listitem").allTextContents()).map((code) => code.trim());
    expect(recoveryCodes).toHaveLength(10);
    await shot(page, "preferences-2fa-recovery-codes");
    await page.getByRole("button", { name: "I have saved them" }).click();
    await page.getByText("Two-factor authentication is on").waitFor();
    await page.getByText("10 recovery codes left").waitFor();
  });

  it("asks for the second factor after the password; a recovery code works once", async () => {
    await logOutFromMenu(page);
    await logIn(page, flotilla.dashboardUrl, email, password);
    await page.waitForURL(url("/login/two-factor"));
    // A pending second factor cannot reach signed-in pages (spec 1 §2.2).
    await page.goto(url("/orgs"));
    await page.waitForURL(url("/login/two-factor?redirect=%2Forgs"));
    await page.getByRole("heading", { name: "Two-factor authentication" }).waitFor();
    await shot(page, "login-two-factor");

    await page.getByRole("button", { name: "Use a recovery code instead" }).click();
    await page.getByLabel("Recovery code").fill(recoveryCodes[0] ?? "");
    await page.getByRole("button", { name: "Verify" }).click();
    await page.waitForURL(url("/orgs"));

    await logOutFromMenu(page);
    await logIn(page, flotilla.dashboardUrl, email, password);
    await page.waitForURL(url("/login/two-factor"));
    await page.getByRole("button", { name: "Use a recovery code instead" }).click();
    await page.getByLabel("Recovery code").fill(recoveryCodes[0] ?? "");
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByRole("alert").waitFor();
    expect(page.url()).toContain("/login/two-factor");
  });

  it("logs in with an authenticator code that submits itself at 6 digits", async () => {
    await page.getByRole("button", { name: "Use your authenticator app instead" }).click();
    // Typed digit by digit, no button press: the 6th digit sends the form.
    await page.getByLabel("Authentication code").pressSequentially(await freshTotp(secret, totpSteps));
    await page.waitForURL((current) => !current.pathname.startsWith("/login"));
  }, 90_000);

  it("resets the password of a 2FA account: the reset form then asks for the code", async () => {
    await logOutFromMenu(page);
    await page.getByRole("link", { name: "Forgot password?" }).click();
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByRole("button", { name: "Send reset link" }).click();
    await submittedTo(page, url("/password-reset/success"));
    const link = await mail.waitForLink(email, /https?:\/\/[^\s"<>]+\/user\/reset-password\/[^\s"<>]+/);
    await openLink(page, link);
    const reset = "reset-password-3";
    await page.getByLabel("New password", { exact: true }).fill(reset);
    await page.getByLabel("Confirm new password").fill(reset);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Two-factor code required.").waitFor();
    await page.getByLabel("Two-factor code").fill(await freshTotp(secret, totpSteps));
    await shot(page, "reset-password-two-factor");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.waitForURL(url("/login"));
    password = reset;

    await logIn(page, flotilla.dashboardUrl, email, password);
    await page.waitForURL(url("/login/two-factor"));
    await page.getByRole("button", { name: "Use a recovery code instead" }).click();
    await page.getByLabel("Recovery code").fill(recoveryCodes[2] ?? "");
    await page.getByRole("button", { name: "Verify" }).click();
    await page.waitForURL((current) => !current.pathname.startsWith("/login"));
  }, 90_000);

  it("adds an SSH key and an API key", async () => {
    await page.goto(url("/preferences/sshkeys"));
    await page.getByText("No SSH keys yet").waitFor();
    await page.getByRole("button", { name: "Add SSH key" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Title").fill("laptop");
    await dialog.getByLabel("Key").fill("ssh-foo AAAA");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByText("This is not a supported public key").waitFor();
    await dialog.getByLabel("Key").fill(sshPublicKey());
    await dialog.getByRole("button", { name: "Save" }).click();
    const table = page.getByRole("table", { name: "SSH keys" });
    await table.getByRole("cell", { name: "laptop", exact: true }).waitFor();
    await table.getByText(/^SHA256:/).waitFor();
    await shot(page, "preferences-sshkeys");

    await page.goto(url("/preferences/access-tokens"));
    await page.getByText("No API keys yet").waitFor();
    await page.getByRole("button", { name: "Create API key" }).first().click();
    const create = page.getByRole("dialog");
    await create.getByRole("button", { name: "Create API key" }).click();
    await create.getByText("Name is required").waitFor();
    await create.getByLabel("Name").fill("ci-deploy");
    await create.getByLabel("Description").fill("Pushes releases from CI");
    await create.getByRole("combobox", { name: "Expires" }).click();
    await page.getByRole("option", { name: "Never" }).click();
    await create.getByText("A key that never expires stays valid until you revoke it.", { exact: false }).waitFor();
    await page.getByRole("option").first().waitFor({ state: "detached" });
    await create.getByRole("combobox", { name: "Expires" }).click();
    await page.getByRole("option", { name: "7 days" }).click();
    await create.getByRole("button", { name: "Create API key" }).click();
    const key = ((await create.getByLabel("Your new API key").textContent()) ?? "").trim();
    expect(key.length).toBeGreaterThan(16);
    await shot(page, "preferences-api-key-created");
    // The key works as a bearer token.
    const whoami = await fetch(`${flotilla.apiUrl}/actor/v1/whoami`, { headers: { authorization: `Bearer ${key}` } });
    expect(whoami.status).toBe(200);
    await create.getByRole("button", { name: "Done" }).click();
    await page
      .getByRole("table", { name: "Access tokens" })
      .getByRole("cell", { name: "ci-deploy", exact: true })
      .waitFor();
    await shot(page, "preferences-access-tokens");
  });

  it("changes the password: the session in another browser is logged out", async () => {
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const otherPage = await other.newPage();
    await logIn(otherPage, flotilla.dashboardUrl, email, password);
    await otherPage.waitForURL(url("/login/two-factor"));
    await otherPage.getByRole("button", { name: "Use a recovery code instead" }).click();
    await otherPage.getByLabel("Recovery code").fill(recoveryCodes[1] ?? "");
    await otherPage.getByRole("button", { name: "Verify" }).click();
    await otherPage.waitForURL((current) => !current.pathname.startsWith("/login"));

    await page.goto(url("/preferences/details"));
    const section = page.getByRole("region", { name: "Change password" });
    await section.getByLabel("Current password").fill(password);
    await section.getByLabel("New password", { exact: true }).fill(newPassword);
    await section.getByLabel("Confirm new password").fill("something-else");
    await section.getByRole("button", { name: "Change password" }).click();
    await section.getByText("Passwords don't match").waitFor();
    await section.getByLabel("Confirm new password").fill(newPassword);
    await section.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Password changed. Your other sessions were logged out.").waitFor();
    password = newPassword;
    await shot(page, "preferences-details");

    // This tab goes on; the other browser's session is over.
    await page.goto(url("/orgs"));
    await page.getByRole("heading", { name: "Organizations", level: 1 }).waitFor();
    await otherPage.goto(url("/orgs"));
    await otherPage.waitForURL(/\/login\?redirect=%2Forgs$/);
    await other.close();
  });

  it("deletes the account after the password, then signs out", async () => {
    await page.goto(url("/preferences/details"));
    await page.getByRole("region", { name: "Delete account" }).getByRole("button", { name: "Delete account" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete your account?" });
    await dialog.getByLabel("Current password").fill("wrong-password-9");
    await dialog.getByRole("button", { name: "Delete account" }).click();
    await dialog.getByText("The password is not correct.").waitFor();
    await shot(page, "preferences-delete-account");
    await dialog.getByLabel("Current password").fill(password);
    await dialog.getByRole("button", { name: "Delete account" }).click();
    await dialog.getByText("Your account has been deleted. Signing you out…").waitFor();
    await page.waitForURL(url("/login"));

    await logIn(page, flotilla.dashboardUrl, email, password);
    await page.getByText("Invalid login credentials.").waitFor();
  });
});
