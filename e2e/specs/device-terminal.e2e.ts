import { mkdirSync } from "node:fs";
import type { Browser, Page, WebSocket } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { cliWorkspace } from "./cli-helpers.ts";
import { firstDeviceUuid, startDemoSession } from "./demo-session.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

/** Screenshots of the terminal card for people to look at (outside the repository). */
const shot = async (page: Page, name: string) => {
  mkdirSync("/tmp/shots-terminal", { recursive: true });
  await page.waitForTimeout(400);
  await page.getByRole("region", { name: "Terminal" }).screenshot({ path: `/tmp/shots-terminal/${name}.png` });
};

/**
 * The web terminal of a device's summary page (issue 10, OPS-019..036): a person opens a Host OS
 * session to the demo's simulated device and runs `echo hello`, opens a second tab on a service,
 * closes it, and leaves the page, which closes the sessions. An observer sees no terminal.
 */
describe("device web terminal", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let uuid = "";
  /** The terminal websockets the page opened. */
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(1));
    page.on("websocket", (socket) => {
      if (socket.url().includes("/terminal/v1/connect")) sockets.push(socket);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  const firstDevice = async () => {
    uuid = await firstDeviceUuid(page, flotilla.apiUrl);
    return uuid;
  };

  /** Clicks into a tab's terminal (the box around its text) and types a line, as a person does. */
  const typeLine = async (tab: string, text: string) => {
    await page
      .getByRole("region", { name: "Terminal" })
      .getByRole("log", { name: `Terminal ${tab}` })
      .locator("..")
      .click();
    await page.keyboard.type(text);
    await page.keyboard.press("Enter");
  };

  it("opens a Host OS terminal, types echo hello and reads hello", async () => {
    await expect.poll(firstDevice, { timeout: 60_000, interval: 500 }).not.toBe("");
    await page.goto(`${flotilla.dashboardUrl}/devices/${uuid}`);
    const card = page.getByRole("region", { name: "Terminal" });
    await card.scrollIntoViewIfNeeded();
    // Host OS is offered once GET /access/v1/hostos/{uuid} says so.
    await expect.poll(() => card.getByLabel("Target").textContent(), { timeout: 30_000 }).toContain("Host OS");
    await card.getByRole("button", { name: "New session" }).click();
    await card.getByRole("tab", { name: "Host OS" }).waitFor();
    // The device registers and connects its cloudlink a moment after the server starts.
    await card.getByText("Connected", { exact: true }).waitFor({ timeout: 60_000 });
    const output = card.getByRole("log", { name: "Terminal Host OS" });
    await expect.poll(() => output.textContent(), { timeout: 15_000 }).toContain(`root@${uuid.slice(0, 7)}:~#`);
    await typeLine("Host OS", "echo hello");
    // The typed line echoes `echo hello`; the shell's answer is `hello` on a line of its own.
    await expect
      .poll(async () => (await output.textContent())?.split("\n").map((line) => line.trim()), { timeout: 15_000 })
      .toContain("hello");
    await typeLine("Host OS", "uname -a");
    await expect.poll(() => output.textContent()).toContain(`Linux ${uuid.slice(0, 7)}`);
    await shot(page, "01-host-os-session");
  }, 180_000);

  it("opens a second tab on a running service, switches between tabs and closes one", async () => {
    const card = page.getByRole("region", { name: "Terminal" });
    // Services are offered when their containers run (the release installs after provisioning).
    await card.getByLabel("Target").click();
    const worker = page.getByRole("option", { name: /^worker/ });
    await worker.waitFor();
    if (await worker.getAttribute("aria-disabled")) {
      await page.keyboard.press("Escape");
      await page
        .getByRole("table", { name: "Services" })
        .getByRole("row", { name: /worker/ })
        .getByText("Running")
        .waitFor({ timeout: 120_000 });
      await expect
        .poll(
          async () => {
            await card.getByLabel("Target").click();
            const disabled = await page.getByRole("option", { name: /^worker/ }).getAttribute("aria-disabled");
            if (disabled) await page.keyboard.press("Escape");
            return disabled;
          },
          { timeout: 60_000, interval: 2000 },
        )
        .toBeNull();
    }
    await page.getByRole("option", { name: /^worker/ }).click();
    await card.getByRole("button", { name: "New session" }).click();
    const tab = card.getByRole("tab", { name: "worker" });
    await tab.waitFor();
    expect(await tab.getAttribute("aria-selected")).toBe("true");
    await card.getByText("Connected", { exact: true }).waitFor({ timeout: 30_000 });
    const output = card.getByRole("log", { name: "Terminal worker" });
    await expect.poll(() => output.textContent(), { timeout: 15_000 }).toContain("root@worker:/usr/src/app#");
    await typeLine("worker", "hostname");
    await expect
      .poll(async () => (await output.textContent())?.split("\n").map((line) => line.trim()))
      .toContain("worker");
    await shot(page, "02-service-tab");

    // Back to the first tab: its session is still there.
    await card.getByRole("tab", { name: "Host OS" }).click();
    expect(await card.getByRole("tab", { name: "Host OS" }).getAttribute("aria-selected")).toBe("true");
    expect(await card.getByRole("log", { name: "Terminal Host OS" }).textContent()).toContain("hello");

    // Closing the worker tab ends its session: its websocket closes.
    const open = () => sockets.filter((socket) => !socket.isClosed()).length;
    expect(open()).toBe(2);
    await card.getByRole("button", { name: "Close worker" }).click();
    await tab.waitFor({ state: "detached" });
    expect(await card.getByRole("tab").count()).toBe(1);
    await expect.poll(open).toBe(1);
  }, 240_000);

  it("rebinds a service tab to the new container when a new release replaces it", async () => {
    const card = page.getByRole("region", { name: "Terminal" });
    await card.getByLabel("Target").click();
    await page.getByRole("option", { name: /^worker/ }).click();
    await card.getByRole("button", { name: "New session" }).click();
    await card.getByRole("tab", { name: "worker" }).waitFor();
    const output = card.getByRole("log", { name: "Terminal worker" });
    await expect.poll(() => output.textContent(), { timeout: 30_000 }).toContain("root@worker:/usr/src/app#");
    const open = () => sockets.filter((socket) => !socket.isClosed()).length;
    const opened = sockets.length;
    expect(open()).toBe(2);

    // A new release of the fleet with another worker image: the device replaces the container.
    const workspace = cliWorkspace("flotilla-terminal-e2e-");
    try {
      const login = await workspace.cli(
        "login",
        "--api",
        flotilla.apiUrl,
        "--email",
        DEMO.email,
        "--password",
        DEMO.password,
      );
      expect(login.code, login.stderr).toBe(0);
      const dir = workspace.project("next", {
        "docker-compose.yml": "services:\n  main:\n    image: nginx:1.27-alpine\n  worker:\n    image: alpine:3.21\n",
      });
      const push = await workspace.cli("push", "demo/demo-fleet", dir);
      expect(push.code, push.stderr).toBe(0);
    } finally {
      workspace.remove();
    }
    // The tab opens a new session to the new container; the old one is closed.
    await expect.poll(() => sockets.length, { timeout: 120_000, interval: 1000 }).toBeGreaterThan(opened);
    await expect.poll(open, { timeout: 30_000 }).toBe(2);
    await card.getByText("Connected", { exact: true }).waitFor({ timeout: 30_000 });
    await typeLine("worker", "hostname");
    await expect
      .poll(async () => (await output.textContent())?.split("\n").map((line) => line.trim()), { timeout: 15_000 })
      .toContain("worker");
    await card.getByRole("button", { name: "Close worker" }).click();
    await expect.poll(open).toBe(1);
  }, 240_000);

  it("closes the device's terminal sessions when the person leaves the device page", async () => {
    expect(sockets.filter((socket) => !socket.isClosed())).toHaveLength(1);
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Diagnostics" }).click();
    await page.waitForURL(/\/diagnostics$/);
    await expect.poll(() => sockets.filter((socket) => !socket.isClosed()).length).toBe(0);
  });

  it("shows no terminal to an observer", async () => {
    const { d: fleets } = await api<{ d: Array<{ id: number }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'",
    );
    const roles = await api<{ d: Array<{ id: number; name: string }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/application_membership_role?$select=id,name",
    );
    await api(page, flotilla.apiUrl, "POST", "/v7/user_application_membership", {
      username: "demo-member",
      is_member_of__application: fleets[0]?.id,
      application_membership_role: roles.d.find((role) => role.name === "observer")?.id,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(consent);
    const observer = await context.newPage();
    await logIn(observer, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await observer.waitForURL(/\/fleets$/);
    await observer.goto(`${flotilla.dashboardUrl}/devices/${uuid}`);
    // The page is there (its logs panel), the terminal card is not.
    await observer.getByRole("region", { name: "Logs" }).waitFor();
    await observer
      .getByRole("region", { name: "Services" })
      .or(observer.getByRole("table", { name: "Services" }))
      .first()
      .waitFor();
    expect(await observer.getByRole("region", { name: "Terminal" }).count()).toBe(0);
    expect(await observer.getByRole("button", { name: "New session" }).count()).toBe(0);
    await context.close();
  });
});
