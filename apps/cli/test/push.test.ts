import fs from "node:fs";
import path from "node:path";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, createTestApp, runCli, type TestApp, tempDir, writeProject } from "./support.ts";

/**
 * The real `flotilla` process against the real API (booted in-process with the server's test
 * harness): login three ways, push, deploy and releases through the builder of docs/releases.md,
 * and what the release looks like afterwards through balena-sdk.
 */
let t: TestApp;
let sdk: BalenaSDK;
let fleet: { id: number; slug: string };
let configDir: string;
const made: string[] = [];
const EMAIL = "pusher@example.com";
const PASSWORD = "pusher-password-1";

const COMPOSE = `services:
  web:
    image: nginx:1.27-alpine
    ports: ["80:80"]
  cache:
    image: redis:7-alpine
`;

const cli = (args: string[], options: { cwd?: string; input?: string; configDir?: string } = {}) =>
  runCli(args, { configDir, ...options });
/** What a failed run printed, for the assertion message. */
const shown = (run: CliRun) => `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

beforeAll(async () => {
  t = await createTestApp();
  const me = await t.factories.user({ email: EMAIL, password: PASSWORD, username: "pusher" });
  const org = await t.factories.organization({ name: "CliCo", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "clifleet" });
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(me.token);
  configDir = tempDir("flotilla-cli-config-", made);
});
afterAll(async () => {
  await t?.close();
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

describe("flotilla login, whoami, logout", () => {
  it("logs in with email and password (the password read from stdin, never echoed), keeps the token 0600", async () => {
    const login = await cli(["login", "--api", t.url, "--email", EMAIL], { input: `${PASSWORD}\n` });
    expect(login.code, shown(login)).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${t.url} as pusher (${EMAIL})`);
    expect(login.stdout + login.stderr).not.toContain(PASSWORD);
    const file = path.join(configDir, "config.json");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { apiUrl: string; token: string };
    expect(saved.apiUrl).toBe(t.url);
    expect(saved.token).toEqual(expect.any(String));

    const whoami = await cli(["whoami"]);
    expect(whoami.code, shown(whoami)).toBe(0);
    expect(whoami.stdout.trim()).toBe(`pusher (${EMAIL}) at ${t.url}`);
  });

  it("refuses a wrong password in one line", async () => {
    const other = tempDir("flotilla-cli-config-", made);
    const run = await cli(["login", "--api", t.url, "--email", EMAIL, "--password", "wrong-password"], {
      configDir: other,
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe("flotilla: Wrong email or password.");
    expect(fs.existsSync(path.join(other, "config.json"))).toBe(false);
  });

  it("logs in with an API key, and logs out", async () => {
    const key = await sdk.models.apiKey.create({ name: "cli test", expiryDate: null });
    const other = tempDir("flotilla-cli-config-", made);
    const login = await cli(["login", "--api", t.url, "--token", key], { configDir: other });
    expect(login.code, shown(login)).toBe(0);
    expect((await cli(["whoami"], { configDir: other })).stdout).toContain("pusher");
    const logout = await cli(["logout"], { configDir: other });
    expect(logout.stdout.trim()).toBe(`Logged out of ${t.url}.`);
    const after = await cli(["whoami"], { configDir: other });
    expect(after.code).toBe(1);
    expect(after.stderr.trim()).toBe("flotilla: Not logged in: run flotilla login");
    const bad = await cli(["login", "--api", t.url, "--token", "not-a-key"], { configDir: other });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("flotilla: ");
  });

  it("asks for the two-factor code of an account that has 2FA on", async () => {
    const user = await t.factories.user({ email: "two@example.com", password: "two-factor-pass", username: "twofa" });
    const own = getSdk({ apiUrl: t.url, dataDirectory: false });
    await own.auth.loginWithToken(user.token);
    const secret = await own.auth.twoFactor.getSetupKey();
    await own.auth.twoFactor.enable(await generate({ secret }));
    // the code that switched 2FA on may not be used again in its 30 s step
    await t.db.query('UPDATE "user" SET totp_last_step = NULL WHERE id = $1', [user.user.id]);
    const other = tempDir("flotilla-cli-config-", made);
    const login = await cli(["login", "--api", t.url, "--email", "two@example.com", "--password", "two-factor-pass"], {
      configDir: other,
      input: `${await generate({ secret })}\n`,
    });
    expect(login.code, shown(login)).toBe(0);
    expect(login.stderr).toContain("Two-factor code:");
    expect((await cli(["whoami"], { configDir: other })).stdout).toContain("twofa (two@example.com)");
  });

  it("logs in through the dashboard's CLI page: the page posts the session token to the printed callback", async () => {
    const other = tempDir("flotilla-cli-config-", made);
    const session = await sdk.auth.getToken();
    let handedOver: Promise<Response> | undefined;
    const run = await runCli(["login", "--api", t.url, "--web"], {
      configDir: other,
      onStdout: (soFar) => {
        const match = /(http\S+\/login\/cli\/(\S+))/.exec(soFar);
        if (!match || handedOver) return;
        expect(match[1]?.startsWith(`${t.config.publicUrl}/login/cli/`)).toBe(true);
        // What cli-login-page.tsx does once the user agrees: a form post of `token` to the callback.
        const callback = decodeURIComponent(match[2] ?? "");
        handedOver = fetch(callback, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token: session }).toString(),
        });
      },
    });
    expect(run.code, shown(run)).toBe(0);
    expect(run.stdout).toContain("as pusher");
    expect((await handedOver)?.status).toBe(200);
    expect(JSON.parse(fs.readFileSync(path.join(other, "config.json"), "utf8")).token).toBe(session);
  });
});

describe("flotilla push", () => {
  it("pushes a compose project of prebuilt images: the log streams, the release is success, assets attached", async () => {
    const dir = writeProject(tempDir("flotilla-cli-project-", made), {
      "docker-compose.yml": COMPOSE,
      "balena.yml": "name: demo\nversion: 1.0.0\n",
      ".dockerignore": "*.log\n",
      "debug.log": "left out",
      "node_modules/x/index.js": "left out",
      "notes/firmware.bin": "firmware bytes",
    });
    const run = await cli(
      ["push", fleet.slug, dir, "--note", "first release from the CLI", "--asset", "notes/firmware.bin:firmware"],
      { cwd: dir },
    );
    expect(run.code, shown(run)).toBe(0);
    expect(run.stdout).toContain(`to the builder of ${fleet.slug}`);
    expect(run.stdout).toContain("Using prebuilt image nginx:1.27-alpine");
    expect(run.stdout).toContain("Using prebuilt image redis:7-alpine");
    const summary = /Release 1\.0\.0 \(([0-9a-f]{7})\) created: success/.exec(run.stdout);
    expect(summary, shown(run)).not.toBeNull();
    expect(run.stdout).toContain("Asset firmware uploaded");

    const [release] = await sdk.models.release.getAllByApplication(fleet.id, {
      $select: ["id", "commit", "status", "raw_version", "is_final", "note"],
      $orderby: { id: "desc" },
      $top: 1,
    });
    expect(release).toMatchObject({
      status: "success",
      raw_version: "1.0.0",
      is_final: true,
      note: "first release from the CLI",
    });
    expect(release?.commit.startsWith(summary?.[1] ?? "-")).toBe(true);
    const images = await sdk.models.release.get(release?.id ?? 0, {
      $select: "id",
      $expand: { release_image: { $expand: { image: { $select: "is_stored_at__image_location" } } } },
    });
    const locations = (images.release_image as { image: { is_stored_at__image_location: string }[] }[])
      .map((link) => link.image[0]?.is_stored_at__image_location)
      .sort();
    expect(locations).toEqual(["nginx:1.27-alpine", "redis:7-alpine"]);
    const assets = await sdk.models.release.asset.getAllByRelease(release?.id ?? 0);
    expect(assets.map((asset) => asset.asset_key)).toEqual(["firmware"]);
    expect(assets[0]?.asset?.size).toBe("firmware bytes".length);
  });

  it("pushes a draft to a fleet named by its bare name, from the current directory", async () => {
    const dir = writeProject(tempDir("flotilla-cli-project-", made), { "docker-compose.yaml": COMPOSE });
    const run = await cli(["push", "clifleet", "--draft"], { cwd: dir });
    expect(run.code, shown(run)).toBe(0);
    // A draft is named by its raw version, as balena names it: <semver>-<created_at in ms>.
    expect(run.stdout).toMatch(/Release 0\.0\.0-\d{13} \([0-9a-f]{7}\) created: success/);
    const [release] = await sdk.models.release.getAllByApplication(fleet.id, {
      $select: ["is_final", "status"],
      $orderby: { id: "desc" },
      $top: 1,
    });
    expect(release).toEqual({ is_final: false, status: "success" });
  });

  it("fails on a bad compose file, printing the parse error", async () => {
    const dir = writeProject(tempDir("flotilla-cli-project-", made), {
      "docker-compose.yml": "services:\n  web:\n    image: [nginx\n",
    });
    const run = await cli(["push", fleet.slug, dir]);
    expect(run.code, shown(run)).toBe(1);
    expect(run.stdout).toMatch(/error: docker-compose\.yml: .+/);
    expect(run.stdout).toMatch(/Release 0\.0\.0(-\d{13})? \([0-9a-f]{7}\) created: failed/);
  });

  it("fails a service that needs building: this server has no builder", async () => {
    const dir = writeProject(tempDir("flotilla-cli-project-", made), {
      "docker-compose.yml": "services:\n  app:\n    build: ./app\n  web:\n    image: nginx:1.27-alpine\n",
      "app/Dockerfile": 'FROM alpine:3.20\nCMD ["sleep", "infinity"]\n',
    });
    const run = await cli(["push", fleet.slug, dir]);
    expect(run.code, shown(run)).toBe(1);
    expect(run.stdout).toContain("no builder configured");
    expect(run.stdout).toContain("created: failed");
    const [release] = await sdk.models.release.getAllByApplication(fleet.id, {
      $select: "status",
      $orderby: { id: "desc" },
      $top: 1,
    });
    expect(release?.status).toBe("failed");
  });

  it("prints the builder's refusal of a user who may not push (an observer of the fleet)", async () => {
    const observer = await t.factories.user({ email: "watcher@example.com", password: "watcher-password" });
    await t.factories.fleetMember(observer.user, fleet, "observer");
    const other = tempDir("flotilla-cli-config-", made);
    await cli(["login", "--api", t.url, "--token", observer.token], { configDir: other });
    const project = writeProject(tempDir("flotilla-cli-project-", made), { "docker-compose.yml": COMPOSE });
    const run = await cli(["push", fleet.slug, project], { configDir: other });
    expect(run.code, shown(run)).toBe(1);
    expect(run.stderr.trim()).toBe("flotilla: You are not allowed to push releases to this fleet (HTTP 403)");
  });

  it("says plainly when the fleet or the project is not there", async () => {
    const project = writeProject(tempDir("flotilla-cli-project-", made), { "docker-compose.yml": COMPOSE });
    const missing = await cli(["push", "clico/nothing", project]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe("flotilla: Fleet not found: clico/nothing");
    // A bare name is looked up among the user's fleets, not the public OS catalogue everyone reads.
    const catalogue = await cli(["push", "raspberrypi4-64", project]);
    expect(catalogue.stderr.trim()).toBe("flotilla: Fleet not found: raspberrypi4-64");
    const empty = tempDir("flotilla-cli-project-", made);
    const bare = await cli(["push", fleet.slug, empty]);
    expect(bare.code).toBe(1);
    expect(bare.stderr.trim()).toMatch(
      /^flotilla: .* has no docker-compose\.yml, docker-compose\.yaml or Dockerfile at its top/,
    );
  });
});

describe("flotilla deploy and releases", () => {
  it("deploys a compose file of prebuilt images, and refuses one with build:", async () => {
    const dir = writeProject(tempDir("flotilla-cli-project-", made), {
      "release.yml": COMPOSE,
      "built.yml": "services:\n  app:\n    build: .\n",
    });
    const run = await cli(["deploy", String(fleet.id), "--compose", "release.yml", "--note", "deployed"], { cwd: dir });
    expect(run.code, shown(run)).toBe(0);
    expect(run.stdout).toMatch(/created: success/);
    const refused = await cli(["deploy", fleet.slug, "--compose", "built.yml"], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('service "app" has build:');
    expect(refused.stderr).toContain("use flotilla push");
  });

  it("lists the fleet's releases", async () => {
    const run = await cli(["releases", fleet.slug]);
    expect(run.code, shown(run)).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^\s*ID\s+VERSION\s+COMMIT\s+STATUS\s+CREATED$/);
    expect(lines).toHaveLength(1 + 5);
    expect(lines.filter((line) => / success /.test(line))).toHaveLength(3);
    expect(lines.filter((line) => / failed /.test(line))).toHaveLength(2);
    expect(run.stdout).toContain("1.0.0 ");
    expect(run.stdout).toContain("(draft)");
    const json = await cli(["releases", String(fleet.id), "--json"]);
    expect((JSON.parse(json.stdout) as unknown[]).length).toBe(5);
  });
});
