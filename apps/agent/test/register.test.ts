import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli.ts";
import { ApiError, createHttp } from "../src/protocol/http.ts";
import { registerDevice } from "../src/protocol/register.ts";
import { apiWithFleet, type TestApp } from "./support.ts";

/** Registration against the real API: POST /device/register and the 409 key exchange. */
let t: TestApp;
let fleet: { id: number };
let provisioningKey: string;
let ownerToken: string;
const http = createHttp({ connections: 2 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-agent-test-"));

beforeAll(async () => {
  let owner: { token: string };
  ({ t, fleet, provisioningKey, owner } = await apiWithFleet());
  ownerToken = owner.token;
});
afterAll(async () => {
  await http.close();
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function deviceKeysOf(deviceId: number) {
  const { rows } = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM api_key k JOIN device d ON d.actor = k.is_of__actor WHERE d.id = $1`,
    [deviceId],
  );
  return rows[0]?.n;
}

describe("registration", () => {
  it("registers with a device key the device chose (32 random bytes, hex)", async () => {
    const identity = await registerDevice(http, {
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      deviceType: "raspberrypi4-64",
      osVersion: "Debian 12",
    });
    expect(identity).toMatchObject({ apiUrl: t.url, fleetId: fleet.id, deviceType: "raspberrypi4-64" });
    expect(identity.uuid).toMatch(/^[0-9a-f]{32}$/);
    expect(identity.deviceKey).toMatch(/^[0-9a-f]{64}$/);
    const { rows } = await t.db.query<{ id: number; os_version: string }>(
      "SELECT id, os_version FROM device WHERE uuid = $1",
      [identity.uuid],
    );
    expect(rows[0]).toEqual({ id: identity.deviceId, os_version: "Debian 12" });
  });

  it("a known uuid (409) is followed by the key exchange with the provisioning key", async () => {
    const first = await registerDevice(http, {
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      deviceType: "raspberrypi4-64",
    });
    // The device registers again with the uuid and id of its state file (and its old key).
    const again = await registerDevice(http, {
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      deviceType: "raspberrypi4-64",
      uuid: first.uuid,
      deviceKey: first.deviceKey,
      deviceId: first.deviceId,
    });
    expect(again).toMatchObject({ uuid: first.uuid, deviceId: first.deviceId });
    expect(again.deviceKey).toMatch(/^[0-9a-f]{64}$/);
    expect(again.deviceKey).not.toBe(first.deviceKey);
    expect(await deviceKeysOf(first.deviceId)).toBe(2);
  });

  it("a 409 without a known device id looks the device up through /v7/device", async () => {
    const first = await registerDevice(http, {
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      deviceType: "raspberrypi4-64",
    });
    // A device that lost its id (and key) but kept its uuid: the provisioning key finds it.
    const again = await registerDevice(http, {
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      deviceType: "raspberrypi4-64",
      uuid: first.uuid,
    });
    expect(again).toMatchObject({ uuid: first.uuid, deviceId: first.deviceId });
    expect(await deviceKeysOf(first.deviceId)).toBe(2);
  });

  it("names the problem for a bad provisioning key or device type", async () => {
    const base = { apiUrl: t.url, fleetId: fleet.id, deviceType: "raspberrypi4-64" };
    const refused = await registerDevice(http, { ...base, provisioningKey: "nope" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(401);
    expect((refused as ApiError).message).toMatch(/^registration failed: 401/);
    const badType = await registerDevice(http, { ...base, provisioningKey, deviceType: "toaster" }).catch(
      (e: unknown) => e,
    );
    expect((badType as ApiError).message).toMatch(/registration failed: 400 .*toaster.*\(invalid_device_type\)/);
    const unreachable = await registerDevice(http, { ...base, provisioningKey, apiUrl: "http://127.0.0.1:9" }).catch(
      (e: unknown) => e,
    );
    expect((unreachable as ApiError).message).toMatch(/^cannot reach http:\/\/127.0.0.1:9: .*ECONNREFUSED/);
  });
});

describe("flotilla-agent register", () => {
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
    return { code, out: out.join("\n"), err: err.join("\n") };
  };

  it("writes the identity to the state file (0600) and registers again through the key exchange", async () => {
    const state = path.join(dir, "agent.json");
    const args = ["register", "--api", t.url, "--provisioning-key", provisioningKey, "--fleet", String(fleet.id)];
    const first = await cli(...args, "--state", state);
    expect(first).toMatchObject({ code: 0, err: "" });
    expect(fs.statSync(state).mode & 0o777).toBe(0o600);
    const identity = JSON.parse(fs.readFileSync(state, "utf8"));
    expect(identity).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f]{32}$/),
      deviceKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      deviceId: expect.any(Number),
      apiUrl: t.url,
      fleetId: fleet.id,
      deviceType: "raspberrypi4-64",
    });
    expect(first.out).toContain(`registered device ${identity.uuid}`);
    const second = await cli(...args, "--state", state);
    expect(second).toMatchObject({ code: 0, err: "" });
    expect(JSON.parse(fs.readFileSync(state, "utf8"))).toEqual({ ...identity, deviceKey: expect.any(String) });
  });

  it("registers from a downloaded configuration file (--config): API, key, fleet, device type and registry", async () => {
    const answer = await fetch(`${t.url}/download-config`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
      body: JSON.stringify({
        appId: fleet.id,
        version: "6.1.0",
        provisioningKeyName: "config test",
        deviceType: "generic-aarch64",
      }),
    });
    expect(answer.status).toBe(200);
    const config = path.join(dir, "config.json");
    const downloaded = (await answer.json()) as Record<string, unknown>;
    // The harness listens on a free port, not on the configured API URL the file names.
    expect(downloaded.apiEndpoint).toBe(t.ctx.config.apiUrl);
    // The harness has no FLOTILLA_REGISTRY_URL: the file names the registry a deployment would.
    expect(downloaded).not.toHaveProperty("registryEndpoint");
    fs.writeFileSync(
      config,
      JSON.stringify({ ...downloaded, apiEndpoint: t.url, registryEndpoint: "registry.example.com" }),
    );
    const state = path.join(dir, "from-config.json");
    expect(await cli("register", "--config", config, "--state", state)).toMatchObject({ code: 0, err: "" });
    expect(JSON.parse(fs.readFileSync(state, "utf8"))).toMatchObject({
      apiUrl: t.url,
      fleetId: fleet.id,
      deviceType: "generic-aarch64",
      registryEndpoint: "registry.example.com",
    });
    // --registry overrides the file's; registering again without either keeps the state file's.
    expect(await cli("register", "--config", config, "--registry", "127.0.0.1:5055", "--state", state)).toMatchObject({
      code: 0,
      err: "",
    });
    expect(JSON.parse(fs.readFileSync(state, "utf8")).registryEndpoint).toBe("127.0.0.1:5055");
    const flags = ["--api", t.url, "--provisioning-key", String(downloaded.apiKey), "--fleet", String(fleet.id)];
    expect(await cli("register", ...flags, "--state", state)).toMatchObject({ code: 0, err: "" });
    expect(JSON.parse(fs.readFileSync(state, "utf8")).registryEndpoint).toBe("127.0.0.1:5055");

    // A broken configuration file is named, with what is wrong in it.
    const broken = path.join(dir, "broken.json");
    fs.writeFileSync(broken, "{");
    expect(await cli("register", "--config", broken)).toMatchObject({
      code: 2,
      err: expect.stringContaining("is not JSON"),
    });
    fs.writeFileSync(broken, JSON.stringify({ apiEndpoint: t.url, applicationId: fleet.id }));
    expect(await cli("register", "--config", broken)).toMatchObject({
      code: 2,
      err: expect.stringContaining('has no "apiKey"'),
    });
    expect(await cli("register", "--config", path.join(dir, "missing.json"))).toMatchObject({
      code: 2,
      err: expect.stringContaining("does not exist"),
    });
  });

  it("bad flags and refusals: one clear line, exit 2 or 1, no stack", async () => {
    expect(await cli("register", "--api", t.url)).toMatchObject({
      code: 2,
      err: expect.stringContaining("--provisioning-key is required"),
    });
    expect(await cli("register", "--api", "ftp://x", "--provisioning-key", "k", "--fleet", "1")).toMatchObject({
      code: 2,
      err: expect.stringContaining('--api must be an http(s) URL, got "ftp://x"'),
    });
    expect(await cli("register", "--api", t.url, "--provisioning-key", "k", "--fleet", "abc")).toMatchObject({
      code: 2,
      err: expect.stringContaining('--fleet must be a whole number from 1 to 2147483647, got "abc"'),
    });
    expect(await cli("register", "--bogus")).toMatchObject({ code: 2, err: expect.stringContaining("--bogus") });
    for (const command of ["register", "run"]) {
      expect(await cli(command, "--registry", "https://registry.example.com")).toMatchObject({
        code: 2,
        err: expect.stringContaining(
          '--registry must be host[:port] without a scheme, e.g. registry.example.com, got "https://',
        ),
      });
    }
    expect(await cli("fly")).toMatchObject({ code: 2, err: expect.stringContaining('unknown command "fly"') });
    const refused = await cli(
      "register",
      ...[
        "--api",
        t.url,
        "--provisioning-key",
        "wrong",
        "--fleet",
        String(fleet.id),
        "--state",
        path.join(dir, "x.json"),
      ],
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^flotilla-agent: registration failed: 401/);
    expect(refused.err).not.toContain("    at ");
    expect(fs.existsSync(path.join(dir, "x.json"))).toBe(false);
    expect(await cli("run", "--state", path.join(dir, "missing.json"))).toMatchObject({
      code: 2,
      err: expect.stringContaining("run flotilla-agent register first"),
    });
  });
});
