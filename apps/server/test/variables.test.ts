import { configVariableRebootsDevice } from "@flotilla/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Variables through the data API (spec 2 §3, §5, §6, §7; issue #8): name and value rules with the
 * spec's texts, 409 duplicates per scope, permissions per role, `GET /config/vars`, and the merged
 * variables in the device's target state with their precedence.
 */
let t: TestApp;
let owner: { token: string };
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: TestDevice;
let other: TestDevice;
let serviceId: number;
let serviceInstall: number;

const post = (resource: string, body: unknown, token = owner.token) => call(t, "POST", `/v7/${resource}`, token, body);
const poll = async (d: TestDevice) =>
  (await call(t, "GET", `/device/v3/${d.uuid}/state`, d.key)).json as Record<
    string,
    { config: Record<string, string>; apps: Record<string, { releases: Record<string, ReleaseState> }> }
  >;
type ReleaseState = { services: Record<string, { environment: Record<string, string> }> };

beforeAll(async () => {
  t = await createTestApp();
  const me = await t.factories.user();
  owner = me;
  const org = await t.factories.organization({ name: "Variables", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "vars-fleet" });
  const key = await provisioningKeyFor(t, owner.token, fleet.id);
  device = await registerDevice(t, key, fleet);
  other = await registerDevice(t, key, fleet);
  const { rows } = await t.db.query<{ id: number }>(
    `INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id`,
    [fleet.id],
  );
  serviceId = Number(rows[0]?.id);
  const installs = await t.db.query<{ id: number }>(
    `INSERT INTO "service_install" (device, installs__service) VALUES ($1, $2) RETURNING id`,
    [device.id, serviceId],
  );
  serviceInstall = Number(installs.rows[0]?.id);
});
afterAll(() => t.close());

describe("variable names and values (spec 2 §5)", () => {
  it.each([
    ["application_environment_variable", () => ({ application: fleet.id })],
    ["service_environment_variable", () => ({ service: serviceId })],
    ["device_environment_variable", () => ({ device: device.id })],
    ["device_service_environment_variable", () => ({ service_install: serviceInstall })],
  ])("%s: mandatory, well-formed, not reserved, not a config variable", async (resource, scope) => {
    const attempt = async (name: unknown) => post(resource, { ...scope(), name, value: "v" });
    expect(await attempt("")).toMatchObject({ status: 400, text: "A name is required" });
    expect(await attempt("1ABC")).toMatchObject({ status: 400, text: "The name must start with a letter" });
    expect(await attempt("MY-VAR")).toMatchObject({
      status: 400,
      text: "The name can only contain letters, digits and underscores",
    });
    expect(await attempt("BALENA")).toMatchObject({
      status: 400,
      code: "variable_reserved",
      text: "This environment variable is reserved and cannot be used.",
    });
    expect(await attempt("BALENA_DEVICE_UUID")).toMatchObject({
      status: 400,
      text: "This environment variable is reserved and cannot be used.",
    });
    expect(await attempt("BALENA_HOST_CONFIG_gpu_mem")).toMatchObject({
      status: 400,
      code: "variable_is_config_variable",
      text: "Configuration variables are managed through the Configuration page.",
    });
    expect((await attempt("BALENA_APP_RESTART_POLICY")).status).toBe(201);
    const created = await attempt("GREETING");
    expect(created.status).toBe(201);
    // The same name in the same scope: 409, in words the SDK's upsert recognises.
    const again = await attempt("GREETING");
    expect(again).toMatchObject({ status: 409, code: "variable_already_exists" });
    expect(again.text).toMatch(/unique/i);
    expect(again.text).toMatch(/already exists/);
    const id = Number(created.json.id);
    expect((await call(t, "PATCH", `/v7/${resource}(${id})`, owner.token, { value: "x".repeat(100_001) })).status).toBe(
      400,
    );
    expect((await call(t, "PATCH", `/v7/${resource}(${id})`, owner.token, { name: "9" })).status).toBe(400);
    expect((await call(t, "PATCH", `/v7/${resource}(${id})`, owner.token, { value: "hello" })).status).toBe(200);
    expect((await call(t, "DELETE", `/v7/${resource}(${id})`, owner.token)).status).toBe(200);
  });

  it("answers 400, never 500, to malformed bodies", async () => {
    const scope = { application: fleet.id };
    for (const body of [
      { ...scope, name: "NO_VALUE" },
      { ...scope, name: 42, value: "x" },
      { ...scope, name: ["A"], value: "x" },
      { ...scope, name: "NUL", value: "a\u0000b" },
      { ...scope, name: "OBJ", value: { a: 1 } },
      { ...scope, name: "NULL", value: null },
      { name: "NO_SCOPE", value: "x" },
      { application: 999_999, name: "NOWHERE", value: "x" },
    ]) {
      const answer = await post("application_environment_variable", body);
      expect([400, 401], JSON.stringify(body)).toContain(answer.status);
    }
    const created = await post("application_environment_variable", { ...scope, name: "EDGE", value: "x" });
    for (const body of [{ name: null }, { value: null }, { name: "" }, { application: "x" }]) {
      const answer = await call(
        t,
        "PATCH",
        `/v7/application_environment_variable(${created.json.id})`,
        owner.token,
        body,
      );
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(t, "GET", "/config/vars?deviceType=", undefined)).status).toBe(400);
    expect((await call(t, "GET", "/config/vars?deviceType=a&deviceType=b", undefined)).status).toBe(400);
    await call(t, "DELETE", `/v7/application_environment_variable(${created.json.id})`, owner.token);
  });

  it("renaming onto an existing name is a 409", async () => {
    const a = await post("application_environment_variable", { application: fleet.id, name: "ONE", value: "1" });
    await post("application_environment_variable", { application: fleet.id, name: "TWO", value: "2" });
    const renamed = await call(t, "PATCH", `/v7/application_environment_variable(${a.json.id})`, owner.token, {
      name: "TWO",
    });
    expect(renamed.status).toBe(409);
    await t.db.query(`DELETE FROM "application_environment_variable" WHERE name IN ('ONE', 'TWO')`);
  });

  it("config variables: namespaced names, schema-checked values, the same 409", async () => {
    for (const [resource, scope] of [
      ["application_config_variable", { application: fleet.id }],
      ["device_config_variable", { device: other.id }],
    ] as const) {
      const attempt = (name: string, value = "1") => post(resource, { ...scope, name, value });
      expect(await attempt("GREETING")).toMatchObject({
        status: 400,
        text: "Configuration variable names must begin with RESIN_ or BALENA_",
      });
      expect(await attempt("BALENA_X-Y")).toMatchObject({
        status: 400,
        text: "The name can only contain letters, digits, underscores or a colon",
      });
      expect(await attempt("BALENA_API_KEY")).toMatchObject({
        status: 400,
        text: "This configuration variable is reserved and cannot be used.",
      });
      expect(await attempt("BALENA_HOST_CONFIG_gpu_mem", "lots")).toMatchObject({
        status: 400,
        text: "The value must be a whole number",
      });
      expect(await attempt("BALENA_HOST_SPLASH_IMAGE", "data:image/jpeg;base64,/9j/")).toMatchObject({
        status: 400,
        text: "The file must be a PNG image",
      });
      const created = await attempt("BALENA_HOST_CONFIG_gpu_mem", " 128 ");
      expect(created.status).toBe(201);
      expect(created.json.value).toBe("128");
      expect((await attempt("BALENA_HOST_CONFIG_gpu_mem", "64")).status).toBe(409);
      expect((await attempt("BALENA_HOST_CONFIG_dtoverlay:1", '"vc4-kms-v3d"')).status).toBe(201);
      expect((await attempt("BALENA_SUPERVISOR_PERSISTENT_LOGGING", "true")).json.value).toBe("1");
    }
    await t.db.query(`DELETE FROM "application_config_variable" WHERE application = $1`, [fleet.id]);
    await t.db.query(`DELETE FROM "device_config_variable" WHERE device = $1`, [other.id]);
  });

  it("follows the server's configured lists", async () => {
    const configured = await createTestApp({
      FLOTILLA_VARIABLE_RESERVED_NAMESPACES: "none",
      FLOTILLA_VARIABLE_BLACKLISTED_NAMES: "SECRET",
    });
    try {
      const answer = await call(configured, "GET", "/config/vars", undefined);
      expect(answer.json).toMatchObject({ reservedNamespaces: [], blackListedNames: ["SECRET"] });
    } finally {
      await configured.close();
    }
  });
});

describe("variable permissions (spec 2 §6)", () => {
  it("operators set device variables and device config, not fleet variables or fleet config", async () => {
    const operator = await t.factories.user();
    await t.factories.fleetMember(operator.user, fleet, "operator");
    const as = (resource: string, body: Record<string, unknown>) => post(resource, body, operator.token);
    expect((await as("device_environment_variable", { device: other.id, name: "OPS", value: "1" })).status).toBe(201);
    expect(
      (await as("device_config_variable", { device: other.id, name: "BALENA_SUPERVISOR_DELTA", value: "1" })).status,
    ).toBe(201);
    expect(
      (await as("application_environment_variable", { application: fleet.id, name: "OPS", value: "1" })).status,
    ).toBe(401);
    expect(
      (await as("application_config_variable", { application: fleet.id, name: "BALENA_SUPERVISOR_DELTA", value: "1" }))
        .status,
    ).toBe(401);
    const observer = await t.factories.user();
    await t.factories.fleetMember(observer.user, fleet, "observer");
    expect(
      (await post("device_environment_variable", { device: other.id, name: "OBS", value: "1" }, observer.token)).status,
    ).toBe(401);
    await t.db.query(`DELETE FROM "device_environment_variable" WHERE device = $1`, [other.id]);
    await t.db.query(`DELETE FROM "device_config_variable" WHERE device = $1`, [other.id]);
  });
});

describe("GET /config/vars (balena-sdk config.getConfigVarSchema)", () => {
  it("answers the rules and the schema per device type, without a token", async () => {
    const pi = await call(t, "GET", "/config/vars?deviceType=raspberrypi4-64", undefined);
    expect(pi.status).toBe(200);
    expect(pi.json).toMatchObject({
      reservedNames: expect.arrayContaining(["BALENA", "RESIN", "USER"]),
      reservedNamespaces: ["RESIN_", "BALENA_"],
      whiteListedNames: expect.any(Array),
      whiteListedNamespaces: [],
      blackListedNames: expect.arrayContaining(["BALENA_API_KEY"]),
      configVarSchema: {
        type: "object",
        properties: {
          BALENA_HOST_CONFIG_gpu_mem: { type: "integer", will_reboot: true },
          BALENA_SUPERVISOR_POLL_INTERVAL: { type: "integer" },
          BALENA_HOST_SPLASH_IMAGE: { format: "data-url" },
          BALENA_SUPERVISOR_LOCAL_MODE: { enum: ["0", "1"], enumNames: ["Disabled", "Enabled"] },
        },
      },
    });
    // The schema's will_reboot is what makes the (simulated) device reboot.
    for (const [name, property] of Object.entries(
      (pi.json.configVarSchema as { properties: Record<string, { will_reboot?: boolean }> }).properties,
    )) {
      expect(property.will_reboot === true, name).toBe(configVariableRebootsDevice(name));
    }
    const nuc = await call(t, "GET", "/config/vars?deviceType=intel-nuc", undefined);
    const properties = (nuc.json.configVarSchema as { properties: Record<string, unknown> }).properties;
    expect(properties.BALENA_SUPERVISOR_POLL_INTERVAL).toBeDefined();
    expect(properties.BALENA_HOST_CONFIG_gpu_mem).toBeUndefined();
    expect((await call(t, "GET", "/config/vars", undefined)).status).toBe(200);
    expect(await call(t, "GET", "/config/vars?deviceType=toaster", undefined)).toMatchObject({
      status: 400,
      json: { message: "Invalid device type: toaster" },
    });
  });
});

describe("variables in the target state (docs/device-protocol.md)", () => {
  it("merges fleet < fleet-service < device < device-service, and the cache drops on every write", async () => {
    const release = await t.factories.release(fleet, { commit: "feed".padEnd(32, "0") });
    const { rows: images } = await t.db.query<{ id: number }>(
      `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'r/main', 'success') RETURNING id`,
      [serviceId],
    );
    await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [
      images[0]?.id,
      release.id,
    ]);
    await t.db.query(`UPDATE "application" SET should_be_running__release = $2 WHERE id = $1`, [fleet.id, release.id]);
    await call(t, "PATCH", `/v7/device(${device.id})`, owner.token, { is_pinned_on__release: release.id });
    await call(t, "PATCH", `/v7/device(${other.id})`, owner.token, { is_pinned_on__release: release.id });
    const env = async (d: TestDevice) =>
      (await poll(d))[d.uuid]?.apps[fleet.uuid]?.releases[release.commit]?.services.main?.environment ?? {};

    expect(
      (await post("application_environment_variable", { application: fleet.id, name: "LEVEL", value: "fleet" })).status,
    ).toBe(201);
    expect((await env(device)).LEVEL).toBe("fleet");
    const service = await post("service_environment_variable", { service: serviceId, name: "LEVEL", value: "service" });
    expect((await env(device)).LEVEL).toBe("service");
    const own = await post("device_environment_variable", { device: device.id, name: "LEVEL", value: "device" });
    expect((await env(device)).LEVEL).toBe("device");
    const install = await post("device_service_environment_variable", {
      service_install: serviceInstall,
      name: "LEVEL",
      value: "device-service",
    });
    expect((await env(device)).LEVEL).toBe("device-service");
    // The other device has no device-level values.
    expect((await env(other)).LEVEL).toBe("service");

    await call(t, "PATCH", `/v7/device_service_environment_variable(${install.json.id})`, owner.token, {
      value: "changed",
    });
    expect((await env(device)).LEVEL).toBe("changed");
    await call(t, "DELETE", `/v7/device_service_environment_variable(${install.json.id})`, owner.token);
    expect((await env(device)).LEVEL).toBe("device");
    await call(t, "DELETE", `/v7/device_environment_variable(${own.json.id})`, owner.token);
    expect((await env(device)).LEVEL).toBe("service");
    await call(t, "DELETE", `/v7/service_environment_variable(${service.json.id})`, owner.token);
    expect((await env(device)).LEVEL).toBe("fleet");

    await post("application_config_variable", {
      application: fleet.id,
      name: "BALENA_HOST_CONFIG_gpu_mem",
      value: "64",
    });
    const deviceConfig = await post("device_config_variable", {
      device: device.id,
      name: "BALENA_HOST_CONFIG_gpu_mem",
      value: "128",
    });
    expect((await poll(device))[device.uuid]?.config.BALENA_HOST_CONFIG_gpu_mem).toBe("128");
    expect((await poll(other))[other.uuid]?.config.BALENA_HOST_CONFIG_gpu_mem).toBe("64");
    await call(t, "DELETE", `/v7/device_config_variable(${deviceConfig.json.id})`, owner.token);
    expect((await poll(device))[device.uuid]?.config.BALENA_HOST_CONFIG_gpu_mem).toBe("64");
  });
});
