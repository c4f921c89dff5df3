import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * The installer a device runs, for real: `GET /install.sh` with `/bin/sh` (dash on Debian), the
 * served tarball installed by npm into a temp prefix (no systemd here: `--no-service`), and the
 * installed `flotilla-agent` registering with a configuration from `POST /download-config`.
 */
const run = promisify(execFile);
let t: TestApp;
let token: string;
let fleet: { id: number };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-install-"));

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  const org = await t.factories.organization({ admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "field" });
  token = owner.token;
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("agent installer", () => {
  it("installs the served agent without this repository and registers the device from a downloaded config", async () => {
    const script = await fetch(`${t.url}/install.sh`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("text/x-shellscript");
    const installer = await script.text();
    expect(installer).toContain(`API='${t.ctx.config.apiUrl}'`);
    fs.writeFileSync(path.join(dir, "install.sh"), installer);

    const tarball = await fetch(`${t.url}/download/agent.tgz`);
    expect(tarball.status).toBe(200);
    expect(tarball.headers.get("content-type")).toBe("application/gzip");
    const etag = tarball.headers.get("etag") as string;
    expect((await tarball.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    expect((await fetch(`${t.url}/download/agent.tgz`, { headers: { "if-none-match": etag } })).status).toBe(304);

    const config = await fetch(`${t.url}/download-config`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ appId: fleet.id, version: "6.1.0", provisioningKeyName: "installer" }),
    });
    expect(config.status).toBe(200);
    fs.writeFileSync(path.join(dir, "config.json"), await config.text());

    const prefix = path.join(dir, "prefix");
    // --without-terminal: nothing from the npm registry, so the test needs no network.
    const env = { ...process.env, npm_config_cache: path.join(dir, "npm-cache") };
    const { stdout } = await run(
      "/bin/sh",
      [
        "install.sh",
        "--config",
        "config.json",
        "--prefix",
        prefix,
        "--no-service",
        "--without-terminal",
        "--api",
        t.url,
      ],
      { cwd: dir, env, timeout: 120_000 },
    );
    expect(stdout).toContain("Installed 31.");
    expect(stdout).toMatch(/registered device [0-9a-f]{32}/);
    expect(stdout).toContain(
      `No service written (--no-service). Start the agent with: ${prefix}/bin/flotilla-agent run`,
    );
    const identity = JSON.parse(fs.readFileSync(path.join(prefix, "flotilla-agent.json"), "utf8"));
    const { rows } = await t.db.query<{ application: number }>(
      'SELECT belongs_to__application AS application FROM "device" WHERE uuid = $1',
      [identity.uuid],
    );
    expect(rows).toEqual([{ application: fleet.id }]);
    expect(fs.realpathSync(path.join(prefix, "bin", "flotilla-agent"))).toBe(
      path.join(prefix, "lib", "node_modules", "flotilla-agent", "flotilla-agent.mjs"),
    );
  }, 180_000);

  it("refuses what it cannot do with one line naming the problem", async () => {
    const script = path.join(dir, "install.sh");
    fs.writeFileSync(script, await (await fetch(`${t.url}/install.sh`)).text());
    const fails = async (...args: string[]) =>
      run("/bin/sh", [script, ...args], { cwd: dir }).then(
        () => "",
        (error: { stderr: string }) => error.stderr,
      );
    expect(await fails()).toContain("--config FILE is required");
    expect(await fails("--config", "nope.json")).toContain("cannot read the configuration file nope.json");
    expect(await fails("--bogus")).toContain("unknown option --bogus");
  });
});
