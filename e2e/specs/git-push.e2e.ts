import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const run = promisify(execFile);

/** Screenshots for people to look at (outside the repository). */
async function shot(page: Page, name: string) {
  fs.mkdirSync("/tmp/shots-git-push", { recursive: true });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `/tmp/shots-git-push/${name}.png`, fullPage: true });
}

/** Runs one of the dialog's shell lines (`git …`, split on spaces) in `cwd`, with this key. */
function gitLine(line: string, cwd: string, key: string) {
  const [command, ...args] = line.split(" ");
  expect(command).toBe("git");
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn("git", args, {
      cwd,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: cwd,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        LC_ALL: "C",
        GIT_SSH_COMMAND: `ssh -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o LogLevel=ERROR -i ${key}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (data: Buffer) => {
      output += data.toString();
    });
    child.stderr.on("data", (data: Buffer) => {
      output += data.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/**
 * The add-release dialog's git method (spec 2 §2, REL-070, REL-071): with the SSH gateway on, the
 * SSH-key step leads to the user's SSH keys, and the remote-add and push commands name the user,
 * the server's host and SSH port and the fleet; running them as shown, with Debian's git, makes
 * a release of the pushed commit. Without a gateway the method says how to turn it on.
 */
describe("git push from the add-release dialog", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let sshPort: number;
  let dir: string;
  let fleetId = 0;

  beforeAll(async () => {
    sshPort = await freePort();
    ({ flotilla, browser, page } = await startDemoSession(0, {}, { FLOTILLA_SSH_PORT: String(sshPort) }));
    const apps = await api<{ d: Array<{ id: number; app_name: string }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/application?$select=id,app_name",
    );
    fleetId = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-e2e-git-"));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("shows the SSH-key step and the remote-add and push commands with the user's name and the fleet, and they work", async () => {
    const host = new URL(flotilla.apiUrl).hostname;
    const remote = `ssh://demo@${host}:${sshPort}/demo/demo-fleet.git`;
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/releases`);
    await page.getByRole("button", { name: "Add release" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Add a release to demo-fleet" });
    await dialog.getByRole("tab", { name: "git" }).click();
    await dialog.getByText("Add an SSH key to your account").waitFor();
    await dialog.getByText("git signs in to this server as demo with an SSH key stored in your preferences.").waitFor();
    const remoteAdd = dialog.getByLabel("Add this fleet as a git remote", { exact: true });
    expect(await remoteAdd.textContent()).toBe(`git remote add flotilla ${remote}`);
    const push = dialog.getByLabel("Push to build a release", { exact: true });
    expect(await push.textContent()).toBe("git push flotilla main");
    await shot(page, "01-git-method");

    // The SSH-key step leads to the user's SSH keys, where the key is added.
    await dialog.getByRole("link", { name: "Add an SSH key in your preferences" }).click();
    await page.waitForURL(/\/preferences\/sshkeys$/);
    const key = path.join(dir, "id_demo");
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "demo@laptop", "-f", key]);
    await page.getByRole("button", { name: "Add SSH key" }).first().click();
    const add = page.getByRole("dialog");
    await add.getByLabel("Title").fill("laptop");
    await add.getByLabel("Key").fill(fs.readFileSync(`${key}.pub`, "utf8").trim());
    await add.getByRole("button", { name: "Save" }).click();
    await page.getByRole("table", { name: "SSH keys" }).getByRole("cell", { name: "laptop", exact: true }).waitFor();

    // The commands as shown, in a project of one prebuilt service (no image builder here).
    const project = path.join(dir, "project");
    fs.mkdirSync(project);
    const local = (...args: string[]) =>
      run("git", ["-c", "user.name=Demo", "-c", "user.email=demo@example.com", ...args], {
        cwd: project,
        env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
      });
    await local("init", "-q", "-b", "main");
    fs.writeFileSync(
      path.join(project, "docker-compose.yml"),
      "services:\n  web:\n    image: nginx:1.27-alpine\n    ports: ['80']\n",
    );
    fs.writeFileSync(path.join(project, "balena.yml"), "version: 3.1.4\n");
    await local("add", ".");
    await local("commit", "-q", "-m", "pushed from the dialog's commands");
    const commit = (await local("rev-parse", "HEAD")).stdout.trim();
    expect((await gitLine(`git remote add flotilla ${remote}`, project, key)).code).toBe(0);
    const pushed = await gitLine("git push flotilla main", project, key);
    expect(pushed.output).toContain("remote: [web] Using prebuilt image nginx:1.27-alpine");
    expect(pushed.output).toContain("remote: Release created");
    expect(pushed.output).toContain("* [new branch]      main -> main");
    expect(pushed.code).toBe(0);

    const made = await api<{ d: Array<{ id: number; status: string; raw_version: string }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      `/v7/release?$select=id,status,raw_version&$filter=belongs_to__application eq ${fleetId} and commit eq '${commit}'`,
    );
    expect(made.d).toHaveLength(1);
    expect(made.d[0]).toMatchObject({ status: "success", raw_version: "3.1.4" });
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/releases/${made.d[0]?.id}`);
    await page.getByText(commit, { exact: true }).first().waitFor();
    await shot(page, "02-pushed-release");
  }, 120_000);

  it("says how to turn the gateway on when the server has none", async () => {
    const plain = await startFlotilla();
    try {
      const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      await other.addInitScript(consent);
      const tab = await other.newPage();
      await logIn(tab, plain.dashboardUrl, DEMO.email, DEMO.password);
      await tab.waitForURL(/\/fleets$/);
      const apps = await api<{ d: Array<{ id: number; app_name: string }> }>(
        tab,
        plain.apiUrl,
        "GET",
        "/v7/application?$select=id,app_name",
      );
      const demoFleet = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
      await tab.goto(`${plain.dashboardUrl}/fleets/${demoFleet}/releases`);
      await tab.getByRole("button", { name: "Add release" }).first().click();
      const dialog = tab.getByRole("dialog", { name: "Add a release to demo-fleet" });
      await dialog.getByRole("tab", { name: "git" }).click();
      await dialog.getByText(/Its operator can turn it on by setting FLOTILLA_SSH_PORT/).waitFor();
      expect(await dialog.getByText("git remote add").count()).toBe(0);
      await dialog.getByRole("link", { name: "Add an SSH key in your preferences" }).waitFor();
      await shot(tab, "03-no-gateway");
      await other.close();
    } finally {
      await plain.stop();
    }
  }, 120_000);
});
