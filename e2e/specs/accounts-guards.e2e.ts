import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn, shot } from "./accounts-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const ADMIN = { email: "root@example.com", password: "admin-password-1" };

/** The route guards of spec 1 §2.2, the shell items of §2.5 and the CLI handoff of §2.3, in Chromium. */
describe("accounts: guards, shell and CLI login", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({ FLOTILLA_ADMIN_EMAIL: ADMIN.email, FLOTILLA_ADMIN_PASSWORD: ADMIN.password }, (ui) => {
    ({ flotilla, page } = ui);
  });
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const sidebar = () => page.getByRole("navigation", { name: "Main navigation" });

  it("asks for cookie consent once: essentials required, analytics optional", async () => {
    await page.goto(url("/login"));
    const banner = page.getByRole("region", { name: "Cookie preferences" });
    await banner.waitFor();
    expect(await banner.getByRole("checkbox", { name: "Essential cookies (required)" }).isDisabled()).toBe(true);
    expect(await banner.getByRole("checkbox", { name: "Analytics cookies (optional)" }).isChecked()).toBe(false);
    await shot(page, "login");
    await banner.getByRole("button", { name: "Save choices" }).click();
    await banner.waitFor({ state: "detached" });
    await page.reload();
    await page.getByRole("heading", { name: "Log in to Flotilla" }).waitFor();
    expect(await banner.count()).toBe(0);
  });

  it("pre-fills an invitation from the redirect and registers with only the allowed fields", async () => {
    await page.goto(url(`/signup?redirect=${encodeURIComponent("/organization/invitation/tok-123")}`));
    await page.getByText("You are signing up to accept an invitation.", { exact: false }).waitFor();
    await shot(page, "signup-invitation");
    await page.getByLabel("Email", { exact: true }).fill(`invited.${Date.now()}@example.com`);
    await page.getByLabel("Password", { exact: true }).fill("invited-pass-1");
    const sent = page.waitForRequest((request) => request.url().endsWith("/user/register"));
    await page.getByRole("button", { name: "Create account" }).click();
    const body = (await sent).postDataJSON() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(
      ["email", "has_disabled_newsletter", "invitation_token", "invitation_type", "password"].sort(),
    );
    expect(body).toMatchObject({ invitation_type: "organization", invitation_token: "tok-123" });
    await page.waitForURL((current) => ["/user/verify-email/pending", "/signup/profile"].includes(current.pathname));
  });

  it("sends a signed-out visitor to /login with the page as redirect, and back there after login", async () => {
    await page.goto(url("/preferences/sshkeys"));
    await page.waitForURL(url("/login?redirect=%2Fpreferences%2Fsshkeys"));
    await page.getByLabel("Email or username").fill(DEMO.email);
    await page.getByLabel("Password", { exact: true }).fill(DEMO.password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(url("/preferences/sshkeys"));
    await page.getByRole("tab", { name: "SSH keys", selected: true }).waitFor();
    // No side menu on preferences pages (spec 1 §2.5).
    expect(await sidebar().count()).toBe(0);

    await page.goto(url("/preferences"));
    await page.waitForURL(url("/preferences/details"));
    await page.getByRole("region", { name: "Account", exact: true }).getByText(DEMO.email).waitFor();
    await shot(page, "preferences-details-top");

    // Signed-in visitors of the logged-out pages go home.
    for (const path of ["/signup", "/login", "/login/two-factor"]) {
      await page.goto(url(path));
      await page.waitForURL(url("/fleets"));
    }
    await sidebar().waitFor();
  });

  it("keeps signed-out visitors off the verification and CLI pages", async () => {
    await page.goto(url("/user/verify-email/pending"));
    await page.waitForURL(url("/login?redirect=%2Fuser%2Fverify-email%2Fpending"));
    await page.goto(url("/login/two-factor"));
    await page.waitForURL(url("/login"));
  });

  it("shows the user menu with preferences; the experimental display-apps option adds Apps with an Alpha badge", async () => {
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(url("/fleets"));
    const header = page.getByRole("banner");
    expect(await header.evaluate((element) => getComputedStyle(element).backgroundColor)).not.toBe("rgb(185, 28, 28)");
    // The help drawer links to the public documentation, forums and hub in a new tab.
    await header.getByRole("button", { name: "Help and support" }).click();
    const help = page.getByRole("dialog", { name: "Help and support" });
    const links: Record<string, string | null> = {};
    for (const name of ["Getting started", "Documentation", "Feature requests", "Community forum", "Help", "Hub"]) {
      const item = help.getByRole("link", { name, exact: true });
      links[name] = await item.getAttribute("href");
      expect(await item.getAttribute("target")).toBe("_blank");
    }
    expect(links.Documentation).toBe("https://docs.balena.io/");
    expect(links.Hub).toBe("https://hub.balena.io/");
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "hidden" });
    await page.getByRole("button", { name: "Account menu" }).click();
    const menu = page.getByRole("menu");
    await menu.getByRole("menuitem", { name: "Copy username" }).waitFor();
    expect(await menu.getByRole("menuitem", { name: "Admin" }).count()).toBe(0);
    await menu.getByRole("menuitem", { name: "Preferences" }).click();
    await page.waitForURL(url("/preferences/details"));

    await page.getByRole("tab", { name: "Experimental" }).click();
    await page.waitForURL(url("/preferences/experimental"));
    await page.getByRole("switch", { name: "Display apps" }).check();
    await page.getByRole("switch", { name: "Navigation stripes" }).check();
    await shot(page, "preferences-experimental");
    await page.goto(url("/fleets"));
    const apps = sidebar().getByRole("link", { name: /Apps/ });
    await apps.waitFor();
    expect(await apps.textContent()).toContain("Alpha");
  });

  it("gives platform administrators a red header and the admin link", async () => {
    await logIn(page, flotilla.dashboardUrl, ADMIN.email, ADMIN.password);
    await page.waitForURL((current) => !current.pathname.startsWith("/login"));
    const header = page.getByRole("banner");
    await page.waitForFunction(() => document.querySelector("header")?.getAttribute("data-admin") === "true");
    expect(await header.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe("rgb(185, 28, 28)");
    await page.getByRole("button", { name: "Account menu" }).click();
    await page.getByRole("menu").getByRole("menuitem", { name: "Admin" }).waitFor();
    await shot(page, "admin-header");
  });

  it("opens the changelog by itself when the stored major version is below the latest", async () => {
    await page.addInitScript(() => {
      if (!sessionStorage.getItem("seeded")) {
        localStorage.setItem("flotilla.changelogVersion", JSON.stringify("30.4.0"));
        sessionStorage.setItem("seeded", "1");
      }
    });
    await page.goto(url("/login"));
    const dialog = page.getByRole("dialog", { name: "What's new in Flotilla 31.1.1" });
    await dialog.getByText("Two-factor authentication with recovery codes").waitFor();
    await shot(page, "changelog");
    await dialog.getByRole("button", { name: "Got it" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.reload();
    await page.getByRole("heading", { name: "Log in to Flotilla" }).waitFor();
    await page.waitForTimeout(500);
    expect(await dialog.count()).toBe(0);
  });

  it("hands the token to a CLI callback on an IP literal, never to another host", async () => {
    const received: string[] = [];
    const callback = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        // A form POST (token=…), or ?token=… when the dashboard's CSP blocks posting to the callback.
        const target = new URL(request.url ?? "/", "http://callback");
        if (target.pathname === "/auth") received.push(body || target.searchParams.toString());
        response.writeHead(200, { "content-type": "text/plain" }).end("CLI logged in");
      });
    });
    await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
    const port = (callback.address() as AddressInfo).port;
    try {
      await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
      await page.waitForURL(url("/fleets"));

      // The callback goes in the query: the dashboard server answers 404 for paths with a dot.
      await page.goto(url(`/login/cli/?callback=${encodeURIComponent("http://evil.example/auth")}`));
      await page.getByText("Command-line login is only allowed to a callback on localhost or an IP address.").waitFor();
      expect(await page.getByRole("button", { name: "Authorize" }).count()).toBe(0);
      await shot(page, "cli-login-refused");

      await page.goto(url(`/login/cli/?callback=${encodeURIComponent(`http://127.0.0.1:${port}/auth`)}`));
      await page.getByRole("button", { name: "Authorize" }).waitFor();
      expect(await sidebar().count()).toBe(0);
      await shot(page, "cli-login");
      await page.getByRole("button", { name: "Authorize" }).click();
      await page.getByText("CLI logged in").waitFor();
      expect(new URL(page.url()).pathname).toBe("/auth");
      expect(received).toHaveLength(1);
      const token = new URLSearchParams(received[0]).get("token") ?? "";
      const whoami = await fetch(`${flotilla.apiUrl}/actor/v1/whoami`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(whoami.status).toBe(200);
    } finally {
      callback.close();
    }
  });
});
