import type { ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeviceNamespace, type DeviceNamespace } from "../../apps/server/test/support/netns.ts";
import { freePort, ROOT, type RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api } from "./fleets-helpers.ts";
import { screenshot } from "./web-helpers.ts";

/**
 * A balenaOS device on the device VPN, used from the dashboard (issue balenaos): a device in its
 * own network namespace connects Debian's OpenVPN client with the credentials and CA Flotilla
 * gives it, and behind it run a Supervisor device API and an SSH server written from balena's
 * documentation (apps/server/test/support/balenaos-device.mjs). A person sees it Online, blinks,
 * restarts and reboots it, restarts a service, changes a fleet variable (the device is told to
 * update at once), runs a command in its host terminal, and sees it go offline when its VPN drops.
 */
describe("a balenaOS device on the device VPN", () => {
  let ns: DeviceNamespace;
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  let dir = "";
  const uuid = crypto.randomBytes(16).toString("hex");
  const deviceKey = crypto.randomBytes(20).toString("hex");
  const apiSecret = crypto.randomBytes(16).toString("hex");
  const processes: ChildProcess[] = [];
  const calls: { call: string; at: number; keyOk: boolean; body: unknown }[] = [];
  const url = (to: string) => `${flotilla.dashboardUrl}${to}`;
  const made = (call: string) => calls.filter((c) => c.call === call && c.keyOk).length;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-balenaos-"));
    ns = await createDeviceNamespace();
    const subnet = `10.${crypto.randomInt(16, 200)}.${crypto.randomInt(0, 256)}.0/24`;
    ({ flotilla, browser, page } = await startDemoSession(
      0,
      {},
      {
        // The device reaches the API and the VPN over its link to this host.
        FLOTILLA_HOST: "0.0.0.0",
        FLOTILLA_VPN_PORT: String(await freePort()),
        FLOTILLA_VPN_HOST: ns.hostAddress,
        FLOTILLA_VPN_SUBNET: subnet,
      },
    ));
    const apps = await api<{ d: Array<{ id: number }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'",
    );
    fleetId = apps.d[0]?.id ?? 0;
    // Polls every 5 s: the heartbeat window (1.5 × the interval, then 15 s) stays short.
    await api(page, flotilla.apiUrl, "POST", "/v7/application_config_variable", {
      application: fleetId,
      name: "BALENA_SUPERVISOR_POLL_INTERVAL",
      value: "5000",
    });

    // What the device gets from "Add device": config.json with the VPN, then it registers.
    const config = await api<{ apiKey: string; deviceType: string; vpnEndpoint: string; vpnPort: number }>(
      page,
      flotilla.apiUrl,
      "POST",
      "/download-config",
      { appId: fleetId, version: "6.0.13", network: "ethernet" },
    );
    expect(config.vpnEndpoint).toBe(ns.hostAddress);
    const apiPort = new URL(flotilla.apiUrl).port;
    const deviceApi = `http://${ns.hostAddress}:${apiPort}`;
    const registered = await fetch(`${flotilla.apiUrl}/device/register`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${config.apiKey}` },
      body: JSON.stringify({ application: fleetId, uuid, device_type: config.deviceType, api_key: deviceKey }),
    });
    expect(registered.status).toBe(201);

    // balenaOS's OpenVPN client: the configuration /os/v1/config serves, with this run's paths.
    const served = (await (await fetch(`${flotilla.apiUrl}/os/v1/config`)).json()) as {
      services: { openvpn: { config: string; ca: string } };
    };
    fs.writeFileSync(path.join(dir, "ca.crt"), served.services.openvpn.ca);
    fs.writeFileSync(path.join(dir, "vpn-auth"), `${uuid}\n${deviceKey}\n`, { mode: 0o600 });
    fs.writeFileSync(
      path.join(dir, "openvpn.conf"),
      served.services.openvpn.config
        .split("\n")
        .filter((line) => !/^(up|down|up-restart)\b/.test(line))
        .join("\n")
        .replace("/etc/openvpn/ca.crt", path.join(dir, "ca.crt"))
        .replace("/var/volatile/vpn-auth", path.join(dir, "vpn-auth")),
    );
    processes.push(ns.spawn("openvpn", ["--config", path.join(dir, "openvpn.conf")]));
    const device = ns.spawn("node", [path.join(ROOT, "apps/server/test/support/balenaos-device.mjs")], {
      DEVICE_UUID: uuid,
      DEVICE_KEY: deviceKey,
      API_URL: deviceApi,
      API_SECRET: apiSecret,
      POLL_MS: "3000",
    });
    processes.push(device);
    readline.createInterface({ input: device.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const event = JSON.parse(line) as { call?: string; keyOk?: boolean; body?: unknown };
      if (event.call) calls.push({ call: event.call, at: Date.now(), keyOk: event.keyOk === true, body: event.body });
    });
  }, 180_000);

  afterAll(async () => {
    for (const child of processes) child.kill("SIGKILL");
    await browser?.close();
    await flotilla?.stop();
    await ns?.remove();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("shows the device Operational once its VPN is up", async () => {
    await page.goto(url(`/devices/${uuid}`));
    await page.getByText("Operational", { exact: true }).first().waitFor({ timeout: 60_000 });
    await screenshot(page, "balenaos-device-online");
  }, 90_000);

  it("blinks, restarts the services and reboots it through its Supervisor API", async () => {
    await page.goto(url(`/devices/${uuid}/actions`));
    for (const [action, call] of [
      ["Blink", "POST /v1/blink"],
      ["Restart services", "POST /v1/restart"],
      ["Reboot", "POST /v1/reboot"],
    ] as const) {
      await page.getByRole("region", { name: action }).getByRole("button", { name: action }).click();
      await page.getByRole("dialog", { name: action }).getByRole("button", { name: action }).click();
      await expect.poll(() => made(call), { timeout: 10_000 }).toBe(1);
    }
    expect(calls.find((c) => c.call === "POST /v1/restart")?.body).toMatchObject({ appId: fleetId });
  }, 60_000);

  it("restarts one service from the device's services", async () => {
    await page.goto(url(`/devices/${uuid}`));
    const restart = page.getByRole("button", { name: "Restart main" });
    await restart.waitFor({ timeout: 30_000 });
    await expect.poll(() => restart.isEnabled(), { timeout: 30_000 }).toBe(true);
    await restart.click();
    const confirm = page.getByRole("dialog");
    if (await confirm.isVisible().catch(() => false)) await confirm.getByRole("button", { name: /Restart/ }).click();
    const call = `POST /v2/applications/${fleetId}/restart-service`;
    await expect.poll(() => made(call), { timeout: 10_000 }).toBe(1);
    // The dashboard names the service by its image, as balena's does; the Supervisor takes either.
    expect(calls.find((c) => c.call === call)?.body).toMatchObject({ imageId: expect.any(Number) });
  }, 60_000);

  it("tells the device to update within 5 s of a fleet variable change", async () => {
    await page.goto(url(`/fleets/${fleetId}/envvars`));
    const editor = page.getByRole("region", { name: "Environment variables" });
    await editor.getByRole("button", { name: "Add variable" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a variable" });
    await dialog.getByLabel("Name").fill("GREETING");
    await dialog.getByLabel("Value").fill("hello");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    const before = made("POST /v1/update");
    await editor.getByRole("button", { name: "Apply 1 change" }).click();
    const applied = Date.now();
    await expect.poll(() => made("POST /v1/update"), { timeout: 5000, interval: 100 }).toBeGreaterThan(before);
    const update = calls.filter((c) => c.call === "POST /v1/update").at(-1);
    expect((update?.at ?? 0) - applied).toBeLessThan(5000);
  }, 30_000);

  it("runs a command in the host OS terminal over the VPN", async () => {
    await page.goto(url(`/devices/${uuid}`));
    const card = page.getByRole("region", { name: "Terminal" });
    await card.scrollIntoViewIfNeeded();
    await expect.poll(() => card.getByLabel("Target").textContent(), { timeout: 30_000 }).toContain("Host OS");
    await card.getByRole("button", { name: "New session" }).click();
    await card.getByText("Connected", { exact: true }).waitFor({ timeout: 30_000 });
    const output = card.getByRole("log", { name: "Terminal Host OS" });
    await output.locator("..").click();
    await page.keyboard.type("echo $((6 * 7))");
    await page.keyboard.press("Enter");
    await expect.poll(async () => (await output.textContent())?.includes("42"), { timeout: 15_000 }).toBe(true);
    await screenshot(page, "balenaos-device-terminal");
  }, 90_000);

  it("shows the device offline when its VPN and network drop", async () => {
    for (const child of processes) child.kill("SIGTERM");
    await page.goto(url(`/devices/${uuid}`));
    // 1.5 × the 5 s poll interval, then 15 s: offline within about 25 s.
    await page.getByText("Disconnected", { exact: true }).first().waitFor({ timeout: 45_000 });
    await screenshot(page, "balenaos-device-offline");
  }, 60_000);
});
