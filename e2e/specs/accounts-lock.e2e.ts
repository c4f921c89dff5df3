import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { freshTotp, logIn, shot, type TotpSteps } from "./accounts-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const MEMBER = "demo-member@example.com";

/**
 * Failed logins lock a login for a while (security review 3): the login page shows the server's
 * whole 429 text, which says how long the lock lasts, and the owner of an account with two-factor
 * authentication gets through it with the password and a code from the authenticator.
 */
describe("accounts: a locked login", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({}, (ui) => {
    ({ flotilla, page } = ui);
  });

  /** A call to the API from the page, so it comes from the browser's own address. */
  const fromPage = (path: string, body: unknown, token?: string) =>
    page.evaluate(
      async ({ url, body, token }) => {
        const response = await fetch(url, {
          method: url.endsWith("/setup") ? "GET" : "POST",
          headers: {
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, text: await response.text() };
      },
      { url: `${flotilla.apiUrl}${path}`, body, token },
    );

  it("says how long the lock lasts and lets a two-factor code through it", async () => {
    await page.addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    await page.goto(`${flotilla.dashboardUrl}/login`);
    // The member turns two-factor authentication on.
    const used: TotpSteps = { last: 0 };
    const session = await fromPage("/login_", { username: MEMBER, password: DEMO.password });
    expect(session.status).toBe(200);
    const secret = (await fromPage("/auth/totp/setup", undefined, session.text)).text;
    const enabled = await fromPage("/auth/totp/verify", { code: await freshTotp(secret, used) }, session.text);
    expect(enabled.status).toBe(200);
    // Ten wrong passwords from this browser's address lock the login to it.
    for (let i = 0; i < 10; i++) {
      expect((await fromPage("/login_", { username: MEMBER, password: "not-the-password" })).status).toBe(401);
    }

    await logIn(page, flotilla.dashboardUrl, MEMBER, DEMO.password);
    await page
      .getByRole("alert")
      .getByText("Too Many Requests. Try again later. Try again in 15 minutes.", { exact: true })
      .waitFor();
    await page.getByRole("link", { name: "reset your password." }).waitFor();
    await shot(page, "login-locked");
    await page.getByLabel("Two-factor code").fill(await freshTotp(secret, used));
    await page.getByRole("button", { name: "Log in" }).click();
    // The code was the second factor: no two-factor page after it.
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
  });
});
