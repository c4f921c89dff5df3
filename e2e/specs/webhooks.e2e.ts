import { type ChildProcess, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { api, consent, demoIds } from "./fleets-helpers.ts";
import { DEMO, screenshot } from "./web-helpers.ts";

const AGENT_BIN = path.resolve(import.meta.dirname, "../../apps/agent/bin/flotilla-agent.mjs");
const AGENT_LOG = path.join(os.tmpdir(), "flotilla-webhooks-e2e-agent.log");

type Received = { event: string; delivery: string; signature: string; body: string };

/** Verifies a Flotilla-Signature as docs/audit-and-webhooks.md tells receivers to. */
function signatureValid(header: string, secret: string, rawBody: string): boolean {
  const [t, v1] = header.split(",").map((part) => part.split("=")[1] ?? "");
  const expected = crypto.createHmac("sha256", secret).update(`${t}.${rawBody}`).digest("hex");
  const given = Buffer.from(v1 ?? "", "hex");
  return (
    given.length === 32 &&
    crypto.timingSafeEqual(given, Buffer.from(expected, "hex")) &&
    Math.abs(Date.now() / 1000 - Number(t)) < 300
  );
}

/**
 * Issue [fleet-ops] "Done when": a webhook to a receiver started by the test (127.0.0.1, allowed by
 * FLOTILLA_FETCH_ALLOW) gets a signed "device offline" event after a simulated device disconnects,
 * with the retry visible in the delivery log after the receiver answers 500 once. The webhook is
 * made, tested, edited, disabled and deleted through the page.
 */
describe("webhooks page", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  let receiver: http.Server;
  let hookUrl = "";
  let agent: ChildProcess | undefined;
  const received: Received[] = [];
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-webhooks-e2e-"));
  // The first retry 1 s after a failure instead of 30 s.
  useDashboard({ FLOTILLA_FETCH_ALLOW: "127.0.0.1", FLOTILLA_WEBHOOK_RETRY_BASE_MS: "1000" }, (ui) => {
    ({ flotilla, page } = ui);
  });
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;

  beforeAll(async () => {
    let offlineSeen = 0;
    receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const event = String(request.headers["flotilla-event"] ?? "");
        received.push({
          event,
          delivery: String(request.headers["flotilla-delivery"] ?? ""),
          signature: String(request.headers["flotilla-signature"] ?? ""),
          body: Buffer.concat(chunks).toString("utf8"),
        });
        // The first "device offline" fails, so the worker has to retry it.
        const fail = event === "device.offline" && offlineSeen++ === 0;
        response.writeHead(fail ? 500 : 200, { "content-type": "text/plain" }).end(fail ? "busy" : "ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/flotilla`;
  });

  afterAll(async () => {
    if (agent && agent.exitCode === null) agent.kill("SIGKILL");
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  async function signIn() {
    await page.context().addInitScript(consent);
    await page.goto(url("/login"));
    await page.getByLabel("Email or username").fill(DEMO.email);
    await page.getByLabel("Password", { exact: true }).fill(DEMO.password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/fleets$/);
  }

  async function stopAgent() {
    const running = agent;
    agent = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGTERM");
    });
  }

  it("delivers a signed device.offline to a local receiver, retried after a 500, and shows both attempts", async () => {
    await signIn();
    const ids = await demoIds(page, flotilla.apiUrl);
    const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);

    await page.goto(url(`/orgs/${ids.org}`));
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(url(`/orgs/${ids.org}/webhooks`));
    await page.getByRole("heading", { name: "No webhooks yet" }).waitFor();
    await screenshot(page, "webhooks-empty");

    // The server refuses a private address, in its words, under the URL field.
    await page.getByRole("button", { name: "Add webhook" }).click();
    const dialog = page.getByRole("dialog", { name: "Add webhook" });
    await dialog.getByRole("button", { name: "Create webhook" }).click();
    await dialog.getByText("Enter the URL to deliver events to.").waitFor();
    await dialog.getByText("Choose at least one event.").waitFor();
    await dialog.getByLabel("Payload URL").fill("http://10.1.2.3/hook");
    await dialog.getByRole("checkbox", { name: /Device offline/ }).check();
    await dialog.getByRole("button", { name: "Create webhook" }).click();
    await dialog.getByText("10.1.2.3 is not a public address; webhooks are sent to public hosts only").waitFor();

    await dialog.getByLabel("Payload URL").fill(hookUrl);
    await dialog.getByRole("combobox", { name: "Fleets (optional)" }).click();
    await page.getByRole("option", { name: "demo-fleet" }).click();
    await dialog.getByLabel("Description").fill("On-call pager");
    await screenshot(page, "webhooks-create");
    await dialog.getByRole("button", { name: "Create webhook" }).click();

    // The secret, once, with its warning and a copy button.
    const secretDialog = page.getByRole("dialog", { name: "Webhook created" });
    await secretDialog.getByText("Copy the secret now: you will not see it again.").waitFor();
    await secretDialog.getByRole("button", { name: "Copy secret" }).waitFor();
    await dialog.waitFor({ state: "hidden" });
    const secret = await secretDialog.getByLabel("Signing secret").inputValue();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    await screenshot(page, "webhooks-secret");
    await secretDialog.getByRole("button", { name: "I have saved it" }).click();
    await secretDialog.waitFor({ state: "hidden" });
    expect(await page.getByText(secret).count()).toBe(0);

    const card = page.getByRole("article", { name: hookUrl });
    await card.getByText("On-call pager").waitFor();
    await card.getByText("Device offline").waitFor();
    await card.getByText("demo-fleet").waitFor();
    await card.getByText("0 failed deliveries in a row").waitFor();
    expect(await card.getByRole("switch", { name: "Enabled" }).isChecked()).toBe(true);

    // A test event: delivered within seconds, signed, shown in the log that opens.
    await card.getByRole("button", { name: "Send test event" }).click();
    const log = card.getByRole("region", { name: "Delivery log" });
    const testRow = log.getByRole("row").filter({ hasText: "webhook.test" });
    await testRow.getByText("Delivered").waitFor({ timeout: 20_000 });
    await testRow.getByText("HTTP 200").waitFor();
    const test = received.find((request) => request.event === "webhook.test");
    expect(test && signatureValid(test.signature, secret, test.body)).toBe(true);

    // A simulated device that polls every second, so its heartbeat times out 1.5 s after it stops.
    await call("POST", "/v7/application_config_variable", {
      application: ids.fleet,
      name: "BALENA_SUPERVISOR_POLL_INTERVAL",
      value: "1000",
    });
    const key = await call<string>("POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: ids.fleet,
      roles: ["provisioning-api-key"],
      name: "webhook e2e device",
    });
    // biome-ignore format: one option and its value a line
    agent = spawn(process.execPath, [AGENT_BIN, "simulate",
      "--api", flotilla.apiUrl,
      "--provisioning-key", key,
      "--fleet", String(ids.fleet),
      "--count", "1",
      "--interval-ms", "1000",
      "--state-dir", stateDir,
    ], { stdio: ["ignore", "pipe", "pipe"] });
    agent.stdout?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
    agent.stderr?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
    const device = async () =>
      (
        await call<{ d: Array<{ uuid: string; api_heartbeat_state: string }> }>(
          "GET",
          `/v7/device?$select=uuid,api_heartbeat_state&$filter=belongs_to__application eq ${ids.fleet}`,
        )
      ).d[0];
    await expect
      .poll(async () => (await device())?.api_heartbeat_state, { timeout: 60_000, interval: 1000 })
      .toBe("online");
    const uuid = (await device())?.uuid;

    // The device disconnects: offline after the timeout (1.5 polls) and 15 s more.
    await stopAgent();
    await expect
      .poll(() => received.filter((request) => request.event === "device.offline").length, {
        timeout: 90_000,
        interval: 500,
      })
      .toBeGreaterThanOrEqual(2);
    const offline = received.filter((request) => request.event === "device.offline");
    const [failed, retried] = offline;
    // One delivery, retried: the same delivery id and body, each signed with the secret.
    expect(retried?.delivery).toBe(failed?.delivery);
    for (const request of offline) expect(signatureValid(request.signature, secret, request.body)).toBe(true);
    expect(signatureValid(failed?.signature ?? "", "not-the-secret", failed?.body ?? "")).toBe(false);
    const payload = JSON.parse(retried?.body ?? "{}");
    expect(payload).toMatchObject({
      type: "device.offline",
      organization: ids.org,
      fleet: ids.fleet,
      data: { device: uuid, state: "offline" },
    });

    // The open log polls: the failed attempt, then the success.
    const offlineRow = log.getByRole("row").filter({ hasText: "device.offline" });
    await offlineRow.getByText("Delivered").waitFor({ timeout: 15_000 });
    await offlineRow.getByText("Attempt 1").waitFor();
    await offlineRow.getByText("HTTP 500").waitFor();
    await offlineRow.getByText("HTTP 200").waitFor();
    await offlineRow.getByText("Attempt 2").waitFor();
    await card.getByText("0 failed deliveries in a row").waitFor();
    await screenshot(page, "webhooks-deliveries");
  }, 240_000);

  it("edits, disables, enables and deletes a webhook", async () => {
    await signIn();
    const { org } = await demoIds(page, flotilla.apiUrl);
    await page.goto(url(`/orgs/${org}/webhooks`));
    const card = page.getByRole("article", { name: hookUrl });
    await card.getByRole("button", { name: "Edit" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit webhook" });
    expect(await dialog.getByLabel("Payload URL").inputValue()).toBe(hookUrl);
    expect(await dialog.getByRole("checkbox", { name: /Device offline/ }).isChecked()).toBe(true);
    await dialog.getByRole("checkbox", { name: /Release failed/ }).check();
    await dialog.getByLabel("Description").fill("Pager and release alerts");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "hidden" });
    await card.getByText("Pager and release alerts").waitFor();
    await card.getByText("Release failed").waitFor();

    // The switch shows the server's state: it turns once the change is saved.
    const enabled = card.getByRole("switch", { name: "Enabled" });
    await enabled.click();
    await card.getByText("Disabled", { exact: true }).waitFor();
    expect(await enabled.isChecked()).toBe(false);
    await enabled.click();
    await expect.poll(() => enabled.isChecked()).toBe(true);
    expect(await card.getByText("Disabled", { exact: true }).count()).toBe(0);

    await card.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete webhook?" });
    await confirm.getByText(hookUrl).waitFor();
    await confirm.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "No webhooks yet" }).waitFor();
  });
});
