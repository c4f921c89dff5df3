import crypto from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn, shot, sshPublicKey } from "./accounts-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const SECRET = crypto.randomBytes(36).toString("base64url");

/** The same session's token, signed with the server's secret, as if the login were `ageMs` old. */
function agedToken(token: string, ageMs: number): string {
  const [header, payload] = token.split(".");
  const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
  const body = Buffer.from(JSON.stringify({ ...claims, authTime: Date.now() - ageMs })).toString("base64url");
  const signature = crypto.createHmac("sha256", SECRET).update(`${header}.${body}`).digest("base64url");
  return `${header}.${body}.${signature}`;
}

/**
 * Re-authentication (spec 1 §4, §7, §9): a sensitive action on a login older than 20 minutes is
 * answered "auth expired"; the dashboard asks for the password, gets a fresh token from
 * POST /user/v1/refresh-token and runs the action again.
 */
describe("accounts: re-authentication", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({ FLOTILLA_SECRET: SECRET }, (ui) => {
    ({ flotilla, page } = ui);
  });

  it("asks for the password when the login is older than 20 minutes, then completes the change", async () => {
    await page.addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
    const token = (await page.evaluate(() => localStorage.getItem("balena-token"))) ?? "";
    await page.evaluate((aged) => localStorage.setItem("balena-token", aged), agedToken(token, 21 * 60 * 1000));

    await page.goto(`${flotilla.dashboardUrl}/preferences/details`);
    const section = page.getByRole("region", { name: "Change email" });
    await section.getByLabel("New email").fill("demo.renamed@example.com");
    await section.getByLabel("Current password").fill(DEMO.password);
    await section.getByRole("button", { name: "Change email" }).click();

    const dialog = page.getByRole("dialog", { name: "Confirm your password" });
    await dialog.getByLabel("Password", { exact: true }).fill("not-my-password");
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.getByText("The password is not correct.", { exact: true }).waitFor();
    await shot(page, "reauth-dialog");
    await dialog.getByLabel("Password", { exact: true }).fill(DEMO.password);
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByText(/^Email changed/).waitFor();

    const fresh = (await page.evaluate(() => localStorage.getItem("balena-token"))) ?? "";
    const claims = JSON.parse(Buffer.from(fresh.split(".")[1] ?? "", "base64url").toString("utf8")) as {
      authTime: number;
    };
    expect(Date.now() - claims.authTime).toBeLessThan(60_000);
  });

  it("asks for the password before adding an SSH key on a login older than 20 minutes", async () => {
    await page.addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    // Another demo account: the test before changed the demo user's email.
    await logIn(page, flotilla.dashboardUrl, "demo-member@example.com", DEMO.password);
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
    const token = (await page.evaluate(() => localStorage.getItem("balena-token"))) ?? "";
    await page.evaluate((aged) => localStorage.setItem("balena-token", aged), agedToken(token, 21 * 60 * 1000));
    await page.goto(`${flotilla.dashboardUrl}/preferences/sshkeys`);
    await page.getByRole("button", { name: "Add SSH key" }).first().click();
    const add = page.getByRole("dialog", { name: "Add SSH key" });
    await add.getByLabel("Title").fill("old login");
    await add.getByLabel("Key").fill(sshPublicKey("reauth@flotilla"));
    await add.getByRole("button", { name: "Save" }).click();

    const confirm = page.getByRole("dialog", { name: "Confirm your password" });
    await confirm.getByLabel("Password", { exact: true }).fill(DEMO.password);
    await confirm.getByRole("button", { name: "Continue" }).click();
    await confirm.waitFor({ state: "detached" });
    await page.getByRole("table", { name: "SSH keys" }).getByRole("cell", { name: "old login", exact: true }).waitFor();
    expect(await add.count()).toBe(0);
  });
});
