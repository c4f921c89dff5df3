import { type ChildProcess, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishBusybox, startPodman, type TestPodman } from "../../apps/server/test/support/podman.ts";
import { freePort, startRegistry, type TestRegistry } from "../../apps/server/test/support/registry.ts";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { cliWorkspace } from "./cli-helpers.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const AGENT_BIN = path.resolve(import.meta.dirname, "../../apps/agent/bin/flotilla-agent.mjs");
const SHOTS = "/tmp/shots-real-device";
const UPSTREAM_IMAGE = "flotilla-e2e/busybox:1";

type Container = { Names: string[]; Id: string; State: string; Labels: Record<string, string> | null };

/**
 * Issue 18 "Done when", on real parts only: the server with an image builder (podman's Docker
 * Engine API) and a real registry (CNCF distribution, token auth answered by the server), the
 * `flotilla` CLI pushing a project with a `build:` and an `image:` service, and a real
 * `flotilla-agent run` registered from the downloaded configuration, running the release on a
 * podman engine of its own (its own image storage: it pulls everything from the registry).
 */
describe("a real device runs what flotilla push built", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let registry: TestRegistry;
  let upstream: TestRegistry;
  let builder: TestPodman;
  let engine: TestPodman;
  let agent: ChildProcess | undefined;
  let agentOutput = "";
  let fleetId = 0;
  let fleetUuid = "";
  let webPort = 0;
  let deviceUuid = "";
  const { cli, project, remove } = cliWorkspace("flotilla-real-device-e2e-");
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);
  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

  /** The project pushed: `web` is built (serving `page`), `ticker` is the upstream's busybox. */
  const projectWith = (name: string, pageText: string) => {
    const dir = project(name, {
      "docker-compose.yml": [
        "services:",
        "  web:",
        "    build: ./web",
        `    ports: ["127.0.0.1:${webPort}:8000"]`,
        "  ticker:",
        `    image: ${upstream.host}/${UPSTREAM_IMAGE}`,
        `    command: ["/bin/sh", "-c", "while true; do echo \\"tick \${GREETING:-unset}\\"; sleep 1; done"]`,
        "",
      ].join("\n"),
      "balena.yml": `version: ${name === "second" ? "7.1.0" : "7.0.0"}\n`,
      "web/Dockerfile": [
        "FROM scratch",
        "COPY busybox /bin/busybox",
        'RUN ["/bin/busybox", "--install", "-s", "/bin"]',
        // A new stamp each push: the sleep step runs (not cached), so the build is seen running.
        "COPY stamp /stamp",
        "RUN sleep 4",
        `RUN mkdir -p /www && echo "${pageText}" > /www/index.html`,
        'CMD ["/bin/httpd", "-f", "-p", "8000", "-h", "/www"]',
        "",
      ].join("\n"),
      "web/stamp": crypto.randomUUID(),
    });
    fs.copyFileSync("/bin/busybox", path.join(dir, "web/busybox"));
    fs.chmodSync(path.join(dir, "web/busybox"), 0o755);
    return dir;
  };

  /** The fleet's newest release (the demo fleet has releases of its own). */
  const newestRelease = async () =>
    (
      await call<{ d: Array<{ id: number; status: string; commit: string; raw_version: string }> }>(
        "GET",
        `/v7/release?$select=id,status,commit,raw_version&$filter=belongs_to__application eq ${fleetId}&$orderby=id desc&$top=1`,
      )
    ).d[0];
  const device = async () =>
    (
      await call<{ d: Array<{ id: number; is_running__release: { __id: number } | null; status: string }> }>(
        "GET",
        `/v7/device?$select=id,is_running__release,status&$filter=uuid eq '${deviceUuid}'`,
      )
    ).d[0];
  /** The device engine's containers of this fleet, by service name. */
  const containers = async () => {
    const list = JSON.parse(await engine.podman("ps", "-a", "--format", "json")) as Container[];
    return new Map(
      list
        .filter((c) => c.Labels?.["io.balena.app-uuid"] === fleetUuid)
        .map((c) => [c.Labels?.["io.balena.service-name"] ?? "", c]),
    );
  };
  const inspect = async (id: string) =>
    (
      JSON.parse(await engine.podman("inspect", id)) as Array<{
        State: { StartedAt: string };
        Config: { Env: string[] };
      }>
    )[0];
  const httpGet = () =>
    fetch(`http://127.0.0.1:${webPort}/`).then(
      async (response) => (await response.text()).trim(),
      () => "",
    );

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    const registryPort = await freePort();
    webPort = await freePort();
    const registryHost = `127.0.0.1:${registryPort}`;
    upstream = await startRegistry({ port: await freePort() });
    builder = await startPodman([registryHost, upstream.host]);
    engine = await startPodman([registryHost], { ownStorage: true });
    await publishBusybox(builder, `${upstream.host}/${UPSTREAM_IMAGE}`);

    flotilla = await startFlotilla({
      FLOTILLA_REGISTRY_URL: `http://${registryHost}`,
      FLOTILLA_BUILDER: `unix://${builder.socket}`,
      FLOTILLA_REGISTRY_MIRROR: "1",
    });
    const certificatePem = await (await fetch(`${flotilla.apiUrl}/auth/v1/registry-cert`)).text();
    registry = await startRegistry({
      port: registryPort,
      token: { realm: `${flotilla.apiUrl}/auth/v1/token`, issuer: "flotilla", certificatePem },
    });

    browser = await launchBrowser();
    const browserContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await browserContext.addInitScript(consent);
    page = await browserContext.newPage();
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(/\/fleets$/);
    const apps = await call<{ d: Array<{ id: number; uuid: string; app_name: string }> }>(
      "GET",
      "/v7/application?$select=id,uuid,app_name",
    );
    const fleet = apps.d.find((app) => app.app_name === "demo-fleet");
    fleetId = fleet?.id ?? 0;
    fleetUuid = fleet?.uuid ?? "";
  }, 180_000);

  // Every step runs even when one fails: a device engine left running keeps its storage mounted.
  afterAll(async () => {
    const stopAgent = async () => {
      if (!agent || agent.exitCode !== null) return;
      const exited = new Promise((resolve) => agent?.once("exit", resolve));
      agent.kill("SIGTERM");
      const timer = setTimeout(() => agent?.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    };
    const steps: Array<() => unknown> = [
      stopAgent,
      () => browser?.close(),
      () => flotilla?.stop(),
      // The fleet's network on the device engine (networks are the engine's, not its storage's).
      () => engine?.podman("network", "rm", "-f", `${fleetUuid}_default`),
      () => engine?.stop(),
      () => builder?.stop(),
      () => registry?.stop(),
      () => upstream?.stop(),
    ];
    for (const step of steps)
      await Promise.resolve()
        .then(step)
        .catch(() => undefined);
    remove();
  }, 120_000);

  it("flotilla push builds the project; the build log streams in the dashboard; the release has an image size", async () => {
    const login = await cli("login", "--api", flotilla.apiUrl, "--email", DEMO.email, "--password", DEMO.password);
    expect(login.code, login.stderr).toBe(0);
    const previous = (await newestRelease())?.id;
    const pushing = cli("push", "demo/demo-fleet", projectWith("first", "release one"));

    // While the build runs, its page shows the engine's steps as they come.
    await expect.poll(async () => (await newestRelease())?.id, { timeout: 30_000 }).not.toBe(previous);
    const release = await newestRelease();
    expect(release?.status).toBe("running");
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/releases/${release?.id}`);
    const log = page.getByRole("log", { name: "Build log" }).locator(".xterm-rows");
    await log.getByText("[web] STEP 1/7: FROM scratch").waitFor({ timeout: 30_000 });
    expect((await newestRelease())?.status).toBe("running");
    await shot("01-build-running");

    const push = await pushing;
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout).toMatch(/\[web\] Image sha256:[0-9a-f]{64} pushed/);
    expect(push.stdout).toMatch(/\[ticker\] Copying image 127\.0\.0\.1:\d+\/flotilla-e2e\/busybox:1 to the registry/);
    expect(push.stdout).toMatch(/Release 7\.0\.0 \([0-9a-f]{7}\) created: success/);
    expect(await newestRelease()).toMatchObject({ id: release?.id, status: "success", raw_version: "7.0.0" });
    await log.getByText("Release created").waitFor({ timeout: 30_000 });
    // The summary: the size of both images (busybox is about 2 MB each), and each digest.
    const size = page.getByText("Image size").locator("..");
    await expect.poll(() => size.textContent(), { timeout: 15_000 }).toMatch(/Image size\s*[\d.]+ MB/);
    const services = page.getByRole("table", { name: "Services" });
    for (const service of ["web", "ticker"]) {
      await services
        .getByRole("row", { name: new RegExp(service) })
        .getByLabel(/^Digest sha256:[0-9a-f]{64}$/)
        .waitFor();
    }
    await shot("02-release-built");
  }, 180_000);

  it("a real flotilla-agent, registered from the downloaded configuration, pulls both images with a token and runs them", async () => {
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/devices`);
    await page.getByRole("button", { name: "Add device" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Add a device to demo-fleet" });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      dialog.getByRole("button", { name: "Download configuration" }).click(),
    ]);
    const work = fs.mkdtempSync("/tmp/flotilla-e2e-device-");
    const configFile = path.join(work, "config.json");
    await download.saveAs(configFile);
    await dialog.getByRole("button", { name: "Done" }).click();
    expect(JSON.parse(fs.readFileSync(configFile, "utf8")).registryEndpoint).toBe(registry.host);

    const state = path.join(work, "agent.json");
    const registered = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [AGENT_BIN, "register", "--config", configFile, "--state", state]);
      let out = "";
      child.stdout.on("data", (chunk) => {
        out += chunk;
      });
      child.stderr.on("data", (chunk) => {
        out += chunk;
      });
      child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(out))));
    });
    deviceUuid = /registered device ([0-9a-f]{32})/.exec(registered)?.[1] ?? "";
    expect(deviceUuid).not.toBe("");
    agent = spawn(process.execPath, [
      AGENT_BIN,
      "run",
      "--state",
      state,
      "--docker-socket",
      `unix://${engine.socket}`,
      "--lock-root",
      path.join(work, "locks"),
      "--report-interval-ms",
      "2000",
    ]);
    agent.stdout?.on("data", (chunk) => {
      agentOutput += chunk;
    });
    agent.stderr?.on("data", (chunk) => {
      agentOutput += chunk;
    });

    const release = await newestRelease();
    await expect
      .poll(async () => (await device())?.is_running__release?.__id, { timeout: 120_000, interval: 1000 })
      .toBe(release?.id);
    const running = await containers();
    expect([...running.keys()].sort()).toEqual(["ticker", "web"]);
    expect([...running.values()].map((c) => c.State)).toEqual(["running", "running"]);
    // Pulled from the registry, by digest: the device's engine has nothing else.
    const images = (await engine.podman("images", "--digests", "--format", "{{.Repository}}@{{.Digest}}"))
      .trim()
      .split("\n");
    expect(images).toHaveLength(2);
    for (const image of images)
      expect(image).toMatch(new RegExp(`^${registry.host}/v2/[0-9a-f]{32}@sha256:[0-9a-f]{64}$`));
    await page.goto(`${flotilla.dashboardUrl}/devices/${deviceUuid}`);
    const table = page.getByRole("table", { name: "Services" });
    await table.getByRole("row", { name: /web/ }).getByText("Running").waitFor({ timeout: 30_000 });
    await table
      .getByRole("row", { name: /ticker/ })
      .getByText("Running")
      .waitFor({ timeout: 30_000 });
    await shot("03-device-running");
  }, 180_000);

  it("shows the containers' logs in the live-log panel, with the service name", async () => {
    const panel = page.getByRole("region", { name: "Logs" });
    const log = panel.getByRole("log", { name: "Device logs" });
    await log.getByText("tick unset").first().waitFor({ timeout: 30_000 });
    await expect.poll(() => log.textContent()).toContain("ticker");
    await panel.scrollIntoViewIfNeeded();
    await shot("04-live-logs");
  }, 60_000);

  it("runs echo inside the web container from the service terminal", async () => {
    const card = page.getByRole("region", { name: "Terminal" });
    await card.scrollIntoViewIfNeeded();
    await card.getByLabel("Target").click();
    await page.getByRole("option", { name: /^web/ }).click();
    await card.getByRole("button", { name: "New session" }).click();
    await card.getByText("Connected", { exact: true }).waitFor({ timeout: 30_000 });
    const output = card.getByRole("log", { name: "Terminal web" });
    await output.locator("..").click();
    await page.keyboard.type("echo inside-$((6*7)) && cat /www/index.html");
    await page.keyboard.press("Enter");
    await expect
      .poll(async () => (await output.textContent())?.split("\n").map((line) => line.trim()), { timeout: 20_000 })
      .toContain("inside-42");
    await card.screenshot({ path: `${SHOTS}/05-terminal.png` });
  }, 90_000);

  it("answers HTTP on the published port", async () => {
    await expect.poll(httpGet, { timeout: 30_000 }).toBe("release one");
  });

  it("a fleet variable recreates the services with the new environment", async () => {
    const before = (await containers()).get("ticker")?.Id;
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/envvars`);
    const editor = page.getByRole("region", { name: "Environment variables" });
    await editor.getByRole("button", { name: "Add variable" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a variable" });
    await dialog.getByLabel("Name").fill("GREETING");
    await dialog.getByLabel("Value").fill("bonjour");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    await editor.getByRole("button", { name: "Apply 1 change" }).click();
    await page.getByText("all changes successful").waitFor();
    // A new ticker container, not merely the old one gone (between the two there is none).
    await expect
      .poll(
        async () => {
          const id = (await containers()).get("ticker")?.Id;
          return id !== undefined && id !== before;
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toBe(true);
    const ticker = (await containers()).get("ticker");
    expect((await inspect(ticker?.Id ?? ""))?.Config.Env).toContain("GREETING=bonjour");
    await page.goto(`${flotilla.dashboardUrl}/devices/${deviceUuid}`);
    await page.getByRole("log", { name: "Device logs" }).getByText("tick bonjour").first().waitFor({ timeout: 30_000 });
  }, 120_000);

  it("a second release replaces the containers (download-then-kill) and the device reports it", async () => {
    const before = await containers();
    const push = await cli("push", "demo/demo-fleet", projectWith("second", "release two"));
    expect(push.code, push.stderr).toBe(0);
    const second = await newestRelease();
    expect(second).toMatchObject({ status: "success", raw_version: "7.1.0" });
    await expect
      .poll(async () => (await device())?.is_running__release?.__id, { timeout: 120_000, interval: 1000 })
      .toBe(second?.id);
    await expect.poll(httpGet, { timeout: 30_000 }).toBe("release two");
    const after = await containers();
    expect(after.get("web")?.Id).not.toBe(before.get("web")?.Id);
    expect(after.get("web")?.Labels?.["io.balena.release-commit"]).toBe(second?.commit);
    // The old containers are gone, and so are the images no release needs any more.
    expect([...after.values()].map((c) => c.Labels?.["io.balena.release-commit"])).toEqual([
      second?.commit,
      second?.commit,
    ]);
    await expect
      .poll(async () => (await engine.podman("images", "-q")).trim().split("\n").length, { timeout: 30_000 })
      .toBe(2);
    await page.goto(`${flotilla.dashboardUrl}/devices/${deviceUuid}`);
    await page
      .getByRole("link", { name: /7\.1\.0/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await shot("06-second-release");
  }, 180_000);

  it("Restart from the dashboard restarts the real container (a new start time)", async () => {
    const web = (await containers()).get("web");
    const started = (await inspect(web?.Id ?? ""))?.State.StartedAt;
    const restart = page.getByRole("button", { name: "Restart web", exact: true });
    await expect.poll(() => restart.isEnabled(), { timeout: 30_000 }).toBe(true);
    await restart.click();
    await page.getByText("Restarted web").waitFor({ timeout: 30_000 });
    await expect
      .poll(async () => (await inspect(web?.Id ?? ""))?.State.StartedAt, { timeout: 30_000 })
      .not.toBe(started);
    // The same container, started again.
    expect((await containers()).get("web")?.Id).toBe(web?.Id);
    await expect.poll(httpGet, { timeout: 30_000 }).toBe("release two");
    expect(agentOutput).not.toMatch(/unauthorized|denied/i);
  }, 90_000);
});
