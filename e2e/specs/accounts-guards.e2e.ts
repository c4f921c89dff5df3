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

  it('logs out with "You have to log in." when a change goes without a token (signed out elsewhere)', async () => {
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(url("/fleets"));
    await page.goto(url("/preferences/details"));
    const newsletter = page.getByRole("switch", { name: "Send me the product newsletter" });
    await newsletter.waitFor();
    // Another tab signed out: the SDK's token is gone, this page still shows.
    await page.evaluate(() => localStorage.removeItem("balena-token"));
    await newsletter.click();
    await page.getByText("You have to log in.", { exact: true }).waitFor();
    await page.waitForURL((current) => current.pathname === "/login");
    expect(new URL(page.url()).searchParams.get("redirect")).toBe("/preferences/details");
    // Not reported as a failure of the change itself (spec 1 §8): one toast, the log-in one.
    expect(await page.getByText("Unauthorized", { exact: false }).count()).toBe(0);
    await shot(page, "login-not-logged-in");
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

  it("hands the token to a loopback CLI callback in a POST body, never to another address", async () => {
    /** A tiny CLI callback server that records what reaches it: method, path and query, body. */
    const callbackServer = async (host: string) => {
      const received: { method: string; url: string; body: string }[] = [];
      const server = http.createServer((request, response) => {
        let body = "";
        request.on("data", (chunk) => {
          body += chunk;
        });
        request.on("end", () => {
          if (!request.url?.startsWith("/favicon")) {
            received.push({ method: request.method ?? "", url: request.url ?? "", body });
          }
          response.writeHead(200, { "content-type": "text/plain" }).end("CLI logged in");
        });
      });
      await new Promise<void>((resolve) => server.listen(0, host, resolve));
      return { received, port: (server.address() as AddressInfo).port, close: () => server.close() };
    };
    const v4 = await callbackServer("127.0.0.1");
    const v6 = await callbackServer("::1");
    // Every request the tab makes, to tell that nothing went to a refused address.
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    const cliPage = (callback: string) =>
      // The callback goes in the query: the dashboard server answers 404 for paths with a dot.
      page.goto(url(`/login/cli/?callback=${encodeURIComponent(callback)}`));
    try {
      await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
      await page.waitForURL(url("/fleets"));

      // Public, private and look-alike addresses are refused on the page, and nothing is sent.
      for (const callback of [
        "http://203.0.113.7:8989/auth",
        "http://8.8.8.8/auth",
        "http://192.168.1.20:8989/auth",
        "http://localhost.evil.example/auth",
      ]) {
        await cliPage(callback);
        await page
          .getByText(
            "Command-line login only hands the token to a callback on this computer: localhost, 127.0.0.1 or [::1]. Nothing was sent.",
          )
          .waitFor();
        expect(await page.getByRole("button", { name: "Authorize" }).count(), callback).toBe(0);
        await shot(page, "cli-login-refused");
      }
      const refusedHosts = ["203.0.113.7", "8.8.8.8", "192.168.1.20", "evil.example"];
      expect(requested.filter((each) => refusedHosts.some((host) => new URL(each).hostname.includes(host)))).toEqual(
        [],
      );

      // [::1] is loopback, but the dashboard's CSP cannot name it: the page says so before
      // anything is sent, and the token goes no other way (no ?token= navigation).
      await cliPage(`http://[::1]:${v6.port}/auth`);
      await page.getByText(/^This browser cannot hand the token to http:\/\/\[::1\]/).waitFor();
      expect(await page.getByRole("button", { name: "Authorize" }).count()).toBe(0);
      expect(v6.received).toEqual([]);

      // 127.0.0.1: the token arrives as the form field of a POST, and not in the URL.
      await cliPage(`http://127.0.0.1:${v4.port}/auth`);
      await page.getByRole("button", { name: "Authorize" }).click();
      await page.getByText("CLI logged in").waitFor();
      expect(new URL(page.url()).pathname).toBe("/auth");
      expect(new URL(page.url()).search).toBe("");
      expect(v4.received).toHaveLength(1);
      expect(v4.received[0]).toMatchObject({ method: "POST", url: "/auth" });
      const token = new URLSearchParams(v4.received[0]?.body).get("token") ?? "";
      expect(token.split(".")).toHaveLength(3);
      expect(requested.filter((each) => each.includes("token="))).toEqual([]);
      const whoami = await fetch(`${flotilla.apiUrl}/actor/v1/whoami`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(whoami.status).toBe(200);
    } finally {
      v4.close();
      v6.close();
    }
  });
});
