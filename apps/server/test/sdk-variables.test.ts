import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Variables through the real balena-sdk (issue #8; spec 2 §7 "Variables"): fleet, service, device
 * and device-service environment variables and fleet and device configuration variables,
 * set (upsert: POST, then PATCH on the 409), get, getAll and remove; the name rules' texts as
 * the SDK reports them; the configuration variable schema.
 */
let t: TestApp;
let sdk: BalenaSDK;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let uuid: string;
let otherUuid: string;
let serviceId: number;
let theirs: { fleetId: number; uuid: string };

beforeAll(async () => {
  t = await createTestApp();
  const me = await t.factories.user({ email: "vars@example.com", password: "vars-password" });
  const org = await t.factories.organization({ name: "VarCo", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "varfleet" });
  uuid = (await t.factories.device(fleet, { name: "one" })).uuid;
  otherUuid = (await t.factories.device(fleet, { name: "two" })).uuid;
  const { rows } = await t.db.query<{ id: number }>(
    "INSERT INTO service (application, service_name) VALUES ($1, 'main') RETURNING id",
    [fleet.id],
  );
  serviceId = Number(rows[0]?.id);
  await t.db.query(
    "INSERT INTO service_install (device, installs__service) SELECT id, $1 FROM device WHERE uuid = ANY($2::text[])",
    [serviceId, [uuid, otherUuid]],
  );
  const stranger = await t.factories.user();
  const theirOrg = await t.factories.organization({ name: "Elsewhere", admins: [stranger.user] });
  const theirFleet = await t.factories.fleet(theirOrg, { name: "hidden" });
  theirs = { fleetId: theirFleet.id, uuid: (await t.factories.device(theirFleet)).uuid };
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "vars@example.com", password: "vars-password" });
});
afterAll(() => t.close());

const pairs = (vars: { name: string; value: string }[]) => vars.map((v) => [v.name, v.value]).sort();

describe("balena-sdk environment variables", () => {
  it("application.envVar: set (twice: upsert), get, getAllByApplication, remove", async () => {
    const { envVar } = sdk.models.application;
    await envVar.set(fleet.id, "GREETING", "hello");
    await envVar.set(fleet.slug, "GREETING", "bonjour");
    await envVar.set(fleet.id, "MODE", "eco");
    expect(await envVar.get(fleet.id, "GREETING")).toBe("bonjour");
    expect(pairs(await envVar.getAllByApplication(fleet.id))).toEqual([
      ["GREETING", "bonjour"],
      ["MODE", "eco"],
    ]);
    await envVar.remove(fleet.id, "MODE");
    expect(await envVar.get(fleet.id, "MODE")).toBeUndefined();
    await expect(envVar.getAllByApplication(theirs.fleetId)).rejects.toMatchObject({
      code: "BalenaApplicationNotFound",
    });
  });

  it("service.var: set, get, getAllByService, getAllByApplication, remove", async () => {
    const vars = sdk.models.service.var;
    await vars.set(serviceId, "RATE", "5");
    await vars.set(serviceId, "RATE", "6");
    expect(await vars.get(serviceId, "RATE")).toBe("6");
    expect(pairs(await vars.getAllByService(serviceId))).toEqual([["RATE", "6"]]);
    expect(pairs(await vars.getAllByApplication(fleet.id))).toEqual([["RATE", "6"]]);
    await vars.remove(serviceId, "RATE");
    expect(await vars.get(serviceId, "RATE")).toBeUndefined();
  });

  it("device.envVar: set (upsert), get, getAllByDevice, getAllByApplication, remove", async () => {
    const { envVar } = sdk.models.device;
    await envVar.set(uuid, "LEVEL", "1");
    await envVar.set(uuid, "LEVEL", "2");
    await envVar.set(otherUuid, "LEVEL", "3");
    expect(await envVar.get(uuid, "LEVEL")).toBe("2");
    expect(pairs(await envVar.getAllByDevice(uuid))).toEqual([["LEVEL", "2"]]);
    expect(pairs(await envVar.getAllByApplication(fleet.id))).toEqual([
      ["LEVEL", "2"],
      ["LEVEL", "3"],
    ]);
    await envVar.remove(uuid, "LEVEL");
    await envVar.remove(otherUuid, "LEVEL");
    expect(await envVar.getAllByDevice(uuid)).toEqual([]);
    await expect(envVar.set(theirs.uuid, "LEVEL", "1")).rejects.toMatchObject({ code: "BalenaDeviceNotFound" });
  });

  it("device.serviceVar: set (upsert), get, getAllByDevice, getAllByApplication, remove", async () => {
    const { serviceVar } = sdk.models.device;
    await serviceVar.set(uuid, serviceId, "PORT", "80");
    await serviceVar.set(uuid, serviceId, "PORT", "8080");
    expect(await serviceVar.get(uuid, serviceId, "PORT")).toBe("8080");
    expect(pairs(await serviceVar.getAllByDevice(uuid))).toEqual([["PORT", "8080"]]);
    expect(pairs(await serviceVar.getAllByApplication(fleet.id))).toEqual([["PORT", "8080"]]);
    await serviceVar.remove(uuid, serviceId, "PORT");
    expect(await serviceVar.get(uuid, serviceId, "PORT")).toBeUndefined();
  });

  it("refuses reserved, invalid and configuration names with the spec's texts", async () => {
    const refused = async (promise: Promise<unknown>, text: string) => {
      const error = (await promise.then(
        () => undefined,
        (e: unknown) => e,
      )) as { statusCode?: number; message?: string } | undefined;
      expect(error?.statusCode).toBe(400);
      expect(error?.message).toContain(text);
    };
    await refused(
      sdk.models.application.envVar.set(fleet.id, "BALENA", "x"),
      "This environment variable is reserved and cannot be used.",
    );
    await refused(
      sdk.models.device.envVar.set(uuid, "RESIN_DEVICE_UUID", "x"),
      "This environment variable is reserved and cannot be used.",
    );
    await refused(
      sdk.models.device.envVar.set(uuid, "BALENA_HOST_CONFIG_gpu_mem", "64"),
      "Configuration variables are managed through the Configuration page.",
    );
    await refused(sdk.models.application.envVar.set(fleet.id, "2FAST", "x"), "The name must start with a letter");
    await refused(
      sdk.models.device.serviceVar.set(uuid, serviceId, "NO-DASH", "x"),
      "The name can only contain letters, digits and underscores",
    );
    await refused(
      sdk.models.application.configVar.set(fleet.id, "GREETING", "x"),
      "Configuration variable names must begin with RESIN_ or BALENA_",
    );
  });
});

describe("balena-sdk configuration variables", () => {
  it("application.configVar: set (upsert), get, getAllByApplication, remove", async () => {
    const { configVar } = sdk.models.application;
    await configVar.set(fleet.id, "BALENA_SUPERVISOR_POLL_INTERVAL", "900000");
    await configVar.set(fleet.id, "BALENA_SUPERVISOR_POLL_INTERVAL", "600000");
    await configVar.set(fleet.id, "RESIN_HOST_CONFIG_gpu_mem", "64");
    expect(await configVar.get(fleet.id, "BALENA_SUPERVISOR_POLL_INTERVAL")).toBe("600000");
    expect(pairs(await configVar.getAllByApplication(fleet.id))).toEqual([
      ["BALENA_SUPERVISOR_POLL_INTERVAL", "600000"],
      ["RESIN_HOST_CONFIG_gpu_mem", "64"],
    ]);
    await configVar.remove(fleet.id, "RESIN_HOST_CONFIG_gpu_mem");
    expect(await configVar.get(fleet.id, "RESIN_HOST_CONFIG_gpu_mem")).toBeUndefined();
  });

  it("device.configVar: set (upsert), get, getAllByDevice, getAllByApplication, remove", async () => {
    const { configVar } = sdk.models.device;
    await configVar.set(uuid, "BALENA_HOST_CONFIG_gpu_mem", "128");
    await configVar.set(uuid, "BALENA_HOST_CONFIG_gpu_mem", "256");
    expect(await configVar.get(uuid, "BALENA_HOST_CONFIG_gpu_mem")).toBe("256");
    expect(pairs(await configVar.getAllByDevice(uuid))).toEqual([["BALENA_HOST_CONFIG_gpu_mem", "256"]]);
    expect(pairs(await configVar.getAllByApplication(fleet.id))).toEqual([["BALENA_HOST_CONFIG_gpu_mem", "256"]]);
    const error = (await configVar.set(uuid, "BALENA_HOST_CONFIG_gpu_mem", "lots").then(
      () => undefined,
      (e: unknown) => e,
    )) as { statusCode?: number; message?: string } | undefined;
    expect(error?.statusCode).toBe(400);
    expect(error?.message).toContain("The value must be a whole number");
    await configVar.remove(uuid, "BALENA_HOST_CONFIG_gpu_mem");
    expect(await configVar.getAllByDevice(uuid)).toEqual([]);
  });

  it("config.getConfigVarSchema and config.getAll", async () => {
    const schema = await sdk.models.config.getConfigVarSchema("raspberrypi4-64");
    expect(schema.reservedNamespaces).toEqual(["RESIN_", "BALENA_"]);
    expect(schema.blackListedNames).toContain("BALENA_SUPERVISOR_API_KEY");
    const properties = schema.configVarSchema.properties as Record<string, Record<string, unknown>>;
    expect(properties.BALENA_HOST_CONFIG_gpu_mem).toMatchObject({ type: "integer", will_reboot: true });
    expect(properties.BALENA_HOST_SPLASH_IMAGE).toMatchObject({ type: "string", format: "data-url" });
    const anonymous = getSdk({ apiUrl: t.url, dataDirectory: false });
    expect((await anonymous.models.config.getConfigVarSchema()).configVarSchema.type).toBe("object");
    const all = await anonymous.models.config.getAll();
    expect(all).toMatchObject({ deviceUrlsBase: t.config.deviceUrlsBaseDomain, signupCodeRequired: false });
  });
});
