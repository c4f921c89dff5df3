import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { connectAgent, eventually } from "./support/agent.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * OS and supervisor updates (issue #10, docs/device-protocol.md "OS and supervisor updates"): the
 * public catalogue of migration 0013 read through the real balena-sdk, `POST /v2/{uuid}/resinhup`
 * on a real simulated device (the agent's simulator, in this process, with short update steps)
 * that goes through the update and comes back on the new OS version, supervisor releases set
 * through the SDK, and the refusals.
 */

// The agent project references this one (its tests start servers), so it is loaded at run time.
type Simulator = {
  devices: Array<{ uuid: string; deviceId: number; host: { model: { updateLock: boolean } } }>;
  stop(): Promise<void>;
};
const agentModule = new URL("../../agent/src/index.ts", import.meta.url).href;
const { startSimulator } = (await import(/* @vite-ignore */ agentModule)) as {
  startSimulator(options: Record<string, unknown>): Promise<Simulator>;
};

let t: TestApp;
let sdk: BalenaSDK;
let owner: { token: string };
const tokens: Record<string, string> = {};
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let provisioningKey: string;
let simulator: Simulator;
let uuid: string;
let deviceId: number;

const deviceRow = async (id: number) => {
  const { rows } = await t.db.query<{
    os_version: string | null;
    supervisor_version: string | null;
    is_connected_to_vpn: boolean;
    provisioning_state: string | null;
    should_be_operated_by__release: number | null;
    should_be_managed_by__release: number | null;
  }>(
    `SELECT os_version, supervisor_version, is_connected_to_vpn, provisioning_state, should_be_operated_by__release,
            should_be_managed_by__release FROM device WHERE id = $1`,
    [id],
  );
  return rows[0];
};
const catalogueRelease = async (fleetSlug: string, version: string) => {
  const { rows } = await t.db.query<{ id: number }>(
    `SELECT r.id FROM release r JOIN application a ON a.id = r.belongs_to__application
      WHERE a.slug = $1 AND r.release_version = $2`,
    [fleetSlug, version],
  );
  const id = rows[0]?.id;
  if (id === undefined) throw new Error(`no release ${version} in ${fleetSlug}`);
  return id;
};
const resinhup = (token: string, target: string, device = uuid) =>
  call(t, "POST", `/v2/${device}/resinhup`, token, { parameters: { target_version: target } });

beforeAll(async () => {
  t = await createTestApp();
  const admin = await t.factories.user();
  owner = admin;
  const org = await t.factories.organization({ name: "Hup", admins: [admin.user] });
  fleet = await t.factories.fleet(org, { name: "hup-fleet" });
  for (const role of ["observer", "safe-operator", "operator"]) {
    const user = await t.factories.user();
    await t.factories.fleetMember(user.user, fleet, role);
    tokens[role] = user.token;
  }
  tokens.stranger = (await t.factories.user()).token;
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(owner.token);
  provisioningKey = await provisioningKeyFor(t, owner.token, fleet.id);
  simulator = await startSimulator({
    apiUrl: t.url,
    provisioningKey,
    fleetId: fleet.id,
    count: 1,
    intervalMs: 300,
    updateStepMs: 150,
    rebootMs: 400,
    disconnectChance: 0,
    log: () => undefined,
  });
  const [device] = simulator.devices;
  if (!device) throw new Error("no simulated device");
  uuid = device.uuid;
  deviceId = device.deviceId;
  await eventually(async () => {
    const row = await deviceRow(deviceId);
    return row?.is_connected_to_vpn === true && row.os_version === "balenaOS 6.1.0" && !row.provisioning_state;
  }, 20_000);
}, 40_000);
afterAll(async () => {
  await simulator?.stop();
  await t?.close();
});

describe("the public OS catalogue (migration 0013) through balena-sdk", () => {
  it("lists a device type's final OS versions with their OS type and base", async () => {
    const versions = await sdk.models.os.getAvailableOsVersions("raspberrypi4-64");
    const raw = versions.map((v) => v.raw_version);
    expect(raw).toEqual(["2025.4.1", "2024.10.2", "6.2.4", "6.1.0", "6.0.13", "5.3.1", "2.115.18", "2.83.10"]);
    expect(versions.find((v) => v.raw_version === "2025.4.1")).toMatchObject({
      osType: "esr",
      basedOnVersion: "6.2.4",
    });
    expect(versions.find((v) => v.raw_version === "6.2.4")).toMatchObject({ osType: "default", line: "current" });
    // The failed 6.3.0 build is not offered; a device type without releases has none.
    expect(await sdk.models.os.getAvailableOsVersions("odroid-xu4")).toEqual([]);
    const pi5 = await sdk.models.os.getAvailableOsVersions("raspberrypi5");
    expect(pi5.map((v) => v.raw_version)).toEqual(["6.2.4", "6.1.0", "6.0.13", "5.3.1", "5.1.20"]);
  });

  it("answers the supported update targets of a version", async () => {
    const supported = await sdk.models.os.getSupportedOsUpdateVersions("raspberrypi4-64", "6.1.0");
    expect(supported.current).toBe("6.1.0");
    expect(supported.versions).toEqual(["2025.4.1", "6.2.4"]);
  });

  it("lists the supervisor releases of an architecture: final, successful, not 0.0.0", async () => {
    const releases = await sdk.models.os.getSupervisorReleasesForCpuArchitecture("aarch64");
    expect(releases.map((r) => r.raw_version)).toEqual(["17.0.1", "16.8.2", "16.7.0"]);
    const amd64 = await sdk.models.os.getSupervisorReleasesForCpuArchitecture("amd64");
    expect(amd64.map((r) => r.raw_version)).toEqual(["17.0.1", "16.8.2", "16.7.0"]);
    expect(amd64[0]?.id).not.toBe(releases[0]?.id);
  });

  it("keeps the public fleets out of users' fleet and organization lists, and read-only", async () => {
    const stranger = getSdk({ apiUrl: t.url, dataDirectory: false });
    await stranger.auth.loginWithToken(tokens.stranger ?? "");
    // Readable (the SDK reads them), but not the user's: the dashboard's list asks for a role.
    const readable = await stranger.pine.get({ resource: "application", options: { $select: ["slug"] } });
    expect(readable.map((a) => a.slug)).toContain("balena_os/raspberrypi4-64-esr");
    const listed = await call(
      t,
      "GET",
      "/v7/application?$select=slug&$filter=user_access_roles/any(ua:ua/role ne null)",
      tokens.stranger,
    );
    expect(listed.json.d).toEqual([]);
    expect(await stranger.models.application.getAllDirectlyAccessible()).toEqual([]);
    const organizations = await stranger.pine.get({ resource: "organization", options: { $select: "handle" } });
    expect(organizations.map((o) => o.handle)).not.toContain("balena_os");
    const hostFleet = readable.find((a) => a.slug === "balena_os/raspberrypi4-64") as { id?: number } | undefined;
    const { rows } = await t.db.query<{ id: number }>(
      `SELECT id FROM application WHERE slug = 'balena_os/raspberrypi4-64'`,
    );
    const id = rows[0]?.id;
    const rename = await call(t, "PATCH", `/v7/application(${id})`, tokens.stranger, { app_name: "mine" });
    // Readable but not the caller's to change: refused by name, not a silent 200 (issue #17).
    expect(rename.status).toBe(401);
    const { rows: after } = await t.db.query<{ app_name: string }>(`SELECT app_name FROM application WHERE id = $1`, [
      id,
    ]);
    expect(after[0]?.app_name).toBe("raspberrypi4-64");
    const release = await call(t, "POST", "/v7/release", owner.token, {
      belongs_to__application: id,
      commit: "f".repeat(32),
      status: "success",
      composition: {},
      source: "cloud",
      start_timestamp: new Date().toISOString(),
    });
    expect(release.status).toBe(401);
    expect(hostFleet).toBeDefined();
  });
});

describe("POST /v2/{uuid}/resinhup on a simulated device", () => {
  it("refuses what cannot start, with the spec's texts", async () => {
    expect(await resinhup(owner.token, "9.9.9")).toMatchObject({
      status: 404,
      code: "os_release_not_found",
      json: { message: "OS release not found" },
    });
    expect(await resinhup(owner.token, "6.0.13")).toMatchObject({
      status: 400,
      code: "update_not_supported_for_type_version",
      json: { message: expect.stringContaining("OS downgrades are not allowed") },
    });
    expect(await resinhup(owner.token, "2024.10.2")).toMatchObject({
      status: 400,
      code: "update_not_supported_for_type_version",
      json: { message: expect.stringContaining("downgrade cannot switch to esr") },
    });
    expect(await resinhup(owner.token, "6.1.0")).toMatchObject({
      status: 400,
      code: "update_not_supported_for_type_version",
    });
    expect((await call(t, "POST", `/v2/${uuid}/resinhup`, owner.token, { parameters: {} })).status).toBe(400);
    expect((await resinhup(tokens.observer ?? "", "6.2.4")).status).toBe(403);
    expect((await resinhup(tokens.stranger ?? "", "6.2.4")).status).toBe(404);
  });

  it("answers Supervisor locked. while the device holds its update lock", async () => {
    const host = simulator.devices[0]?.host;
    if (!host) throw new Error("no host");
    host.model.updateLock = true;
    try {
      expect(await resinhup(owner.token, "6.2.4")).toMatchObject({
        status: 423,
        code: "supervisor_locked",
        json: { message: "Supervisor locked." },
      });
    } finally {
      host.model.updateLock = false;
    }
  });

  it("triggers the update: the device downloads, reboots and reports the new version", async () => {
    const answer = await resinhup(tokens["safe-operator"] ?? "", "6.2.4");
    expect(answer).toMatchObject({
      status: 202,
      json: {
        status: "triggered",
        action: "resinhup",
        parameters: { target_version: "6.2.4" },
        lastRun: expect.any(Number),
      },
    });
    expect((await deviceRow(deviceId))?.should_be_operated_by__release).toBe(
      await catalogueRelease("balena_os/raspberrypi4-64", "6.2.4"),
    );
    // A second run while the first goes on is not triggered.
    expect(await resinhup(owner.token, "6.2.4")).toMatchObject({
      status: 502,
      json: { message: "Cannot start the update process" },
    });
    await eventually(async () => (await deviceRow(deviceId))?.is_connected_to_vpn === false, 20_000);
    await eventually(async () => {
      const row = await deviceRow(deviceId);
      return row?.os_version === "balenaOS 6.2.4" && row.is_connected_to_vpn;
    }, 20_000);
    const status = await call(t, "GET", `/v1/${uuid}/resinhup`, owner.token);
    expect(status).toMatchObject({ status: 200, json: { status: "done", parameters: { target_version: "6.2.4" } } });
    // The device's log lines travel in batches: the last may land after its report.
    let messages: string[] = [];
    await eventually(async () => {
      messages = (await sdk.logs.history(uuid)).map((line) => line.message);
      return messages.includes("Running balenaOS 6.2.4");
    }, 10_000);
    expect(messages).toContain("Downloading OS update 6.2.4 … 40%");
    // Now up to date, and the SDK offers only the ESR switch.
    expect(await resinhup(owner.token, "6.2.4")).toMatchObject({
      status: 400,
      code: "update_not_supported_for_type_version",
    });
    const supported = await sdk.models.os.getSupportedOsUpdateVersions("raspberrypi4-64", "6.2.4");
    expect(supported.versions).toEqual([]);
  }, 60_000);

  it("refuses offline devices, and turns an agent that cannot update into Cannot start the update process", async () => {
    const offline = await registerDevice(t, provisioningKey, fleet, {
      os_version: "balenaOS 6.1.0",
      os_variant: "prod",
    });
    expect(await resinhup(owner.token, "6.2.4", offline.uuid)).toMatchObject({
      status: 400,
      code: "device_must_be_online",
    });
    const unparseable = await registerDevice(t, provisioningKey, fleet, { os_version: "balenaOS", os_variant: "prod" });
    const agent = await connectAgent(t.url, unparseable.key);
    await eventually(async () => (await deviceRow(unparseable.id))?.is_connected_to_vpn === true);
    expect(await resinhup(owner.token, "6.2.4", unparseable.uuid)).toMatchObject({
      status: 400,
      json: { message: "could not parse OS version" },
    });
    await agent.close();
    // The real agent's answer (apps/agent/src/real/host.ts): it cannot update its host OS.
    const real = await registerDevice(t, provisioningKey, fleet, { os_version: "balenaOS 6.1.0", os_variant: "prod" });
    const realAgent = await connectAgent(t.url, real.key, () => ({
      status: 501,
      body: { Data: null, Error: "This device cannot update its host OS from Flotilla" },
    }));
    await eventually(async () => (await deviceRow(real.id))?.is_connected_to_vpn === true);
    expect(await resinhup(owner.token, "6.2.4", real.uuid)).toMatchObject({
      status: 502,
      code: "os_update_not_triggered",
      json: { message: "Cannot start the update process" },
    });
    expect((await deviceRow(real.id))?.should_be_operated_by__release).toBeNull();
    await realAgent.close();
  });
});

describe("supervisor updates (should_be_managed_by__release)", () => {
  let esr: TestDevice;
  beforeAll(async () => {
    esr = await registerDevice(t, provisioningKey, fleet, { os_version: "balenaOS 2025.4.1", os_variant: "prod" });
  });
  const setSupervisor = (token: string, device: number, release: number) =>
    call(t, "PATCH", `/v7/device(${device})`, token, { should_be_managed_by__release: release });

  it("sets a supervisor release through balena-sdk and the device runs it", async () => {
    await sdk.models.device.pinToSupervisorRelease(uuid, "17.0.1");
    const wanted = await catalogueRelease("balena_os/aarch64-supervisor", "17.0.1");
    expect((await deviceRow(deviceId))?.should_be_managed_by__release).toBe(wanted);
    await eventually(async () => (await deviceRow(deviceId))?.supervisor_version === "17.0.1", 20_000);
    // The device's log lines travel in batches: the last may land after its report.
    let logs: string[] = [];
    await eventually(async () => {
      logs = (await sdk.logs.history(uuid)).map((line) => line.message);
      return logs.includes("Supervisor 17.0.1 started");
    }, 10_000);
    expect(logs).toContain("Updating supervisor to 17.0.1");
  }, 30_000);

  it("carries the supervisor app in the device's target state", async () => {
    const plain = await registerDevice(t, provisioningKey, fleet, { os_version: "balenaOS 6.1.0", os_variant: "prod" });
    const release = await catalogueRelease("balena_os/aarch64-supervisor", "16.8.2");
    expect((await setSupervisor(owner.token, plain.id, release)).status).toBe(200);
    const { rows } = await t.db.query<{ uuid: string }>(
      `SELECT uuid FROM application WHERE slug = 'balena_os/aarch64-supervisor'`,
    );
    const state = await call(t, "GET", `/device/v3/${plain.uuid}/state`, plain.key);
    expect(state.status).toBe(200);
    const apps = (state.json[plain.uuid] as { apps: Record<string, unknown> }).apps;
    // The fleet's app first (what the device runs), then the supervisor's.
    expect(Object.keys(apps)).toEqual([fleet.uuid, rows[0]?.uuid]);
    const supervisor = apps[rows[0]?.uuid ?? ""] as { name: string; releases: Record<string, unknown> };
    expect(supervisor.name).toBe("balena_os/aarch64-supervisor");
    expect(Object.values(supervisor.releases)).toEqual([
      expect.objectContaining({
        id: release,
        services: {
          "balena-supervisor": expect.objectContaining({
            labels: expect.objectContaining({ "io.balena.supervisor.version": "16.8.2" }),
          }),
        },
      }),
    ]);
  });

  it("refuses releases that are not supervisor releases of the device's architecture", async () => {
    const zero = await catalogueRelease("balena_os/aarch64-supervisor", "0.0.0");
    const failed = await catalogueRelease("balena_os/aarch64-supervisor", "17.1.0");
    const otherArch = await catalogueRelease("balena_os/amd64-supervisor", "16.8.2");
    const osRelease = await catalogueRelease("balena_os/raspberrypi4-64", "6.2.4");
    for (const release of [zero, failed, otherArch, osRelease]) {
      expect(await setSupervisor(owner.token, deviceId, release)).toMatchObject({
        status: 404,
        code: "supervisor_release_not_found",
        text: expect.stringContaining("supervisor release not found"),
      });
    }
    await expect(sdk.models.device.pinToSupervisorRelease(uuid, "0.0.0")).rejects.toThrow(/not found/i);
  });

  it("blocks ESR devices and callers without the supervisor upgrade permission", async () => {
    const release = await catalogueRelease("balena_os/aarch64-supervisor", "16.8.2");
    expect(await setSupervisor(owner.token, esr.id, release)).toMatchObject({
      status: 400,
      code: "cannot_update_esr_supervisor",
    });
    // safe-operator may update devices but not upgrade supervisors; operator may.
    expect(await setSupervisor(tokens["safe-operator"] ?? "", deviceId, release)).toMatchObject({ status: 403 });
    expect((await setSupervisor(tokens.operator ?? "", deviceId, release)).status).toBe(200);
    expect((await deviceRow(deviceId))?.should_be_managed_by__release).toBe(release);
  });
});
