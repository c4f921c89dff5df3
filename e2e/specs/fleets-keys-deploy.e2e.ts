import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { api, consent, shot } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const BALENA_YML = `name: Widget Kiosk
type: sw.application
description: A kiosk that shows widgets.
version: 1.0.0
data:
  defaultDeviceType: raspberrypi4-64
  supportedDeviceTypes:
    - raspberrypi4-64
    - raspberrypi3-64
  applicationEnvironmentVariables:
    - GREETING: hello
  applicationConfigVariables:
    - BALENA_HOST_CONFIG_gpu_mem: "64"
`;

/** A project archive as GitHub serves them: one root folder around a compose file of a prebuilt image. */
function widgetTarball(): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-e2e-widget-"));
  try {
    fs.mkdirSync(path.join(dir, "widget-main"));
    fs.writeFileSync(path.join(dir, "widget-main/docker-compose.yml"), "services:\n  kiosk:\n    image: alpine:3\n");
    return execFileSync("tar", ["-czf", "-", "-C", dir, "widget-main"]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A stand-in for the repository host: its API (default branch), raw files (balena.yml) and an archive. */
async function startRepositoryHost() {
  const tarball = widgetTarball();
  const server = http.createServer((request, response) => {
    const path = request.url ?? "";
    if (path === "/archive/widget.tar.gz") {
      response.writeHead(200, { "Content-Type": "application/gzip" });
      return response.end(tarball);
    }
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "Content-Type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (path === "/repos/acme/widget" || path === "/repos/acme/broken") return json(200, { default_branch: "main" });
    if (path === "/raw/acme/widget/main/balena.yml") {
      response.writeHead(200, { "Content-Type": "text/plain" });
      return response.end(BALENA_YML);
    }
    if (path === "/raw/acme/broken/main/balena.yml") {
      response.writeHead(200, { "Content-Type": "text/plain" });
      return response.end("name: [unclosed\n  type: : :");
    }
    return json(404, { message: "Not Found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("provisioning keys and deploy with a button", () => {
  let repositoryHost: Awaited<ReturnType<typeof startRepositoryHost>>;
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let context: BrowserContext;
  let admin: Page;
  let demoFleetId = 0;
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const call = <T>(method: string, path: string, body?: unknown) => api<T>(admin, flotilla.apiUrl, method, path, body);

  beforeAll(async () => {
    repositoryHost = await startRepositoryHost();
    flotilla = await startFlotilla({
      FLOTILLA_REPOSITORY_API_URL: `http://127.0.0.1:${repositoryHost.port}`,
      FLOTILLA_REPOSITORY_RAW_URL: `http://127.0.0.1:${repositoryHost.port}/raw`,
      // The tarball link points at this machine, which the outbound fetcher refuses unless allowed.
      FLOTILLA_FETCH_ALLOW: "127.0.0.1",
    });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(consent);
    admin = await context.newPage();
    await logIn(admin, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await admin.waitForURL(/\/fleets$/);
    const found = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'",
    );
    demoFleetId = found.d[0]?.id ?? 0;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    await repositoryHost?.stop();
  });

  it("lists, creates and revokes a fleet's provisioning keys", async () => {
    await admin.goto(url(`/fleets/${demoFleetId}`));
    await admin
      .getByRole("navigation", { name: "Main navigation" })
      .getByRole("link", { name: "Provisioning keys" })
      .click();
    await admin.waitForURL(new RegExp(`/fleets/${demoFleetId}/api-keys$`));
    await admin.getByText("No provisioning keys").waitFor();
    await admin.getByRole("button", { name: "Create provisioning key" }).first().click();
    const dialog = admin.getByRole("dialog", { name: "Create provisioning key" });
    await dialog.getByRole("button", { name: "Create provisioning key" }).click();
    await dialog.getByText("Name is required").waitFor();
    await dialog.getByLabel("Name").fill("factory-line-1");
    await dialog.getByLabel("Expires").click();
    await admin.getByRole("option", { name: "7 days" }).click();
    await dialog.getByRole("button", { name: "Create provisioning key" }).click();
    const created = admin.getByRole("dialog", { name: "Provisioning key" });
    await created.getByRole("button", { name: "Done" }).waitFor();
    await shot(admin, "11-key-created");
    expect((await created.getByTestId("created-key").textContent())?.length).toBeGreaterThan(16);
    await created.getByRole("button", { name: "Done" }).click();
    const table = admin.getByRole("table", { name: "Provisioning keys" });
    const row = table.getByRole("row", { name: /factory-line-1/ });
    await row.waitFor();
    const inSevenDays = new Date(Date.now() + 7 * 24 * 3600 * 1000);
    await row.getByText(inSevenDays.toLocaleString("en-US", { month: "short" })).waitFor();
    await shot(admin, "12-keys");
    await row.getByRole("button", { name: "Revoke factory-line-1" }).click();
    await admin.getByRole("dialog", { name: "Revoke key" }).getByRole("button", { name: "Revoke key" }).click();
    await admin.getByText("Provisioning key revoked").waitFor();
    await admin.getByText("No provisioning keys").waitFor();
  });

  it("hides provisioning keys from an observer and sends them home", async () => {
    const roles = await call<{ d: Array<{ id: number; name: string }> }>(
      "GET",
      "/v7/application_membership_role?$select=id,name",
    );
    await call("POST", "/v7/user_application_membership", {
      username: "demo-member",
      is_member_of__application: demoFleetId,
      application_membership_role: roles.d.find((role) => role.name === "observer")?.id,
    });
    const observerContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await observerContext.addInitScript(consent);
    const observer = await observerContext.newPage();
    await logIn(observer, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await observer.waitForURL(/\/fleets$/);
    await observer.goto(url(`/fleets/${demoFleetId}`));
    const menu = observer.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Summary" }).waitFor();
    expect(await menu.getByRole("link", { name: "Provisioning keys" }).count()).toBe(0);
    await observer.goto(url(`/fleets/${demoFleetId}/api-keys`));
    await observer.waitForURL(/\/fleets$/);
    await observerContext.close();
  });

  it("builds a release from a tarball in the first existing fleet by default and remembers it", async () => {
    const tarballUrl = `http://127.0.0.1:${repositoryHost.port}/archive/widget.tar.gz`;
    await admin.goto(url(`/deploy?tarballUrl=${encodeURIComponent(tarballUrl)}`));
    await admin.getByText(tarballUrl).waitFor();
    expect(await admin.getByLabel("Deploy to an existing fleet").isChecked()).toBe(true);
    await admin.getByRole("combobox", { name: "Fleet" }).getByText("demo-fleet").waitFor();
    await admin.getByText("Deploy builds a release from this archive in the chosen fleet").waitFor();
    await shot(admin, "13-deploy-tarball");
    await admin.getByRole("button", { name: "Deploy" }).click();
    // The release exists (POST /v3/buildFromUrl through balena-sdk's release.createFromUrl) and its page opens.
    await admin.getByText("The release is being built.", { exact: true }).waitFor();
    await admin.waitForURL(new RegExp(`/fleets/${demoFleetId}/releases/\\d+$`));
    const releaseId = Number(new URL(admin.url()).pathname.split("/").pop());
    await expect
      .poll(
        async () =>
          (await call<{ d: Array<{ status: string }> }>("GET", `/v7/release(${releaseId})?$select=status`)).d[0]
            ?.status,
        {
          timeout: 30_000,
        },
      )
      .toBe("success");
    const pending = await admin.evaluate(() => JSON.parse(localStorage.getItem("flotilla.pendingDeploy") ?? "null"));
    expect(pending).toMatchObject({ fleetId: demoFleetId, tarballUrl });
  });

  it("sets a repository's configuration on a new fleet and says plainly that no release was built", async () => {
    await admin.goto(url(`/deploy?repoUrl=${encodeURIComponent("https://github.com/acme/widget")}`));
    await admin.getByText("Widget Kiosk").waitFor();
    await admin.getByText("A kiosk that shows widgets.").waitFor();
    await admin.getByText("2 fleet variables will be set from the configuration.").waitFor();
    // Deploying to an existing fleet is the default, with the first fleet chosen.
    expect(await admin.getByLabel("Deploy to an existing fleet").isChecked()).toBe(true);
    await admin.getByText("This link names a repository, not an archive").waitFor();
    await shot(admin, "13-deploy");
    await admin.getByLabel("Create a new fleet").check();
    expect(await admin.getByLabel("Fleet name").inputValue()).toBe("Widget-Kiosk");
    await admin.getByRole("button", { name: "Deploy" }).click();
    await admin.getByText("The fleet's variables were set. No release was built.", { exact: true }).waitFor();
    await admin.waitForURL(/\/fleets\/\d+$/);
    await admin.getByRole("heading", { name: "Widget-Kiosk", level: 1 }).waitFor();
    const fleet = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'Widget-Kiosk'",
    );
    const id = fleet.d[0]?.id;
    const envs = await call<{ d: Array<{ name: string; value: string }> }>(
      "GET",
      `/v7/application_environment_variable?$select=name,value&$filter=application eq ${id}`,
    );
    expect(envs.d).toEqual([{ name: "GREETING", value: "hello" }]);
    const configs = await call<{ d: Array<{ name: string; value: string }> }>(
      "GET",
      `/v7/application_config_variable?$select=name,value&$filter=application eq ${id}`,
    );
    expect(configs.d).toEqual([{ name: "BALENA_HOST_CONFIG_gpu_mem", value: "64" }]);
    const pending = await admin.evaluate(() => JSON.parse(localStorage.getItem("flotilla.pendingDeploy") ?? "null"));
    expect(pending).toMatchObject({ fleetId: id, repoUrl: "https://github.com/acme/widget" });
  });

  it("shows the spec's errors for a missing repository, an invalid contract and a missing URL", async () => {
    await admin.goto(url(`/deploy?repoUrl=${encodeURIComponent("https://github.com/acme/missing")}`));
    await admin.getByText("Repository not found: https://github.com/acme/missing").waitFor();
    expect(await admin.getByRole("button", { name: "Deploy" }).isDisabled()).toBe(true);
    await admin.goto(url(`/deploy?repoUrl=${encodeURIComponent("https://github.com/acme/broken")}`));
    await admin.getByText("The balena.yml contract in the repository is invalid").waitFor();
    await admin.goto(url("/deploy"));
    await admin.getByText("Deploy from URL needs a repository or tarball URL.").waitFor();
  });
});
