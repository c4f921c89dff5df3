import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * The data API through the real balena-sdk: requests nobody here wrote, answers the SDK must
 * accept unchanged. Two organizations, so every read also proves the other one stays invisible.
 */
let t: TestApp;
let sdk: BalenaSDK;
let mine: { org: { id: number; handle: string }; fleet: { id: number; slug: string }; deviceUuid: string };
let theirs: { org: { handle: string }; fleet: { id: number; slug: string }; deviceUuid: string };

beforeAll(async () => {
  t = await createTestApp();
  const me = await t.factories.user({ email: "owner@example.com", password: "owner-password" });
  const stranger = await t.factories.user();
  const myOrg = await t.factories.organization({ name: "Acme", admins: [me.user] });
  const myFleet = await t.factories.fleet(myOrg, { name: "sensors" });
  const myDevice = await t.factories.device(myFleet, { name: "kitchen" });
  await t.factories.device(myFleet, { name: "attic" });
  const otherOrg = await t.factories.organization({ name: "Globex", admins: [stranger.user] });
  const otherFleet = await t.factories.fleet(otherOrg, { name: "secret" });
  const otherDevice = await t.factories.device(otherFleet, { name: "vault" });
  mine = { org: myOrg, fleet: myFleet, deviceUuid: myDevice.uuid };
  theirs = { org: otherOrg, fleet: otherFleet, deviceUuid: otherDevice.uuid };
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "owner@example.com", password: "owner-password" });
});
afterAll(() => t.close());

describe("balena-sdk reads", () => {
  it("lists only the caller's organizations", async () => {
    const orgs = await sdk.models.organization.getAll();
    expect(orgs.map((o) => o.handle)).toEqual(["acme"]);
    await expect(sdk.models.organization.get(theirs.org.handle)).rejects.toMatchObject({
      code: "BalenaOrganizationNotFound",
    });
  });

  it("lists and gets fleets by slug and id, never another organization's", async () => {
    const fleets = await sdk.models.application.getAll();
    expect(fleets.map((f) => f.app_name)).toEqual(["sensors"]);
    expect((await sdk.models.application.get(mine.fleet.slug)).id).toBe(mine.fleet.id);
    expect((await sdk.models.application.get(mine.fleet.id)).slug).toBe(mine.fleet.slug);
    await expect(sdk.models.application.get(theirs.fleet.slug)).rejects.toMatchObject({
      code: "BalenaApplicationNotFound",
    });
  });

  it("lists devices of a fleet in name order and gets one by uuid", async () => {
    const devices = await sdk.models.device.getAllByApplication(mine.fleet.id, {
      $select: ["device_name", "overall_status"],
    });
    expect(devices.map((d) => d.device_name)).toEqual(["attic", "kitchen"]);
    expect(devices[0]?.overall_status).toBe("configuring");
    const device = await sdk.models.device.get(mine.deviceUuid);
    expect(device.device_name).toBe("kitchen");
    expect(device.belongs_to__application).toEqual({ __id: mine.fleet.id });
    await expect(sdk.models.device.get(theirs.deviceUuid)).rejects.toMatchObject({ code: "BalenaDeviceNotFound" });
  });

  it("answers the complex device query of the SDK's dialect in one request", async () => {
    const devices = await sdk.pine.get({
      resource: "device",
      options: {
        $select: ["device_name"],
        $filter: {
          belongs_to__application: {
            $any: {
              $alias: "a",
              $expr: { a: { organization: { $any: { $alias: "o", $expr: { o: { handle: "acme" } } } } } },
            },
          },
          $not: { device_tag: { $any: { $alias: "dt", $expr: { dt: { tag_key: "x" } } } } },
        },
        $expand: {
          device_tag: { $select: ["tag_key", "value"], $orderby: { tag_key: "asc" }, $top: 5 },
          device_environment_variable: { $count: {} },
        },
        $orderby: { device_name: "asc" },
      },
    });
    expect(devices.map((d) => d.device_name)).toEqual(["attic", "kitchen"]);
    expect(devices[0]).toMatchObject({ device_tag: [], device_environment_variable: 0 });
  });

  it("reads the device-type catalogue", async () => {
    const deviceType = await sdk.models.deviceType.get("raspberrypi4-64");
    expect(deviceType.name).toBe("Raspberry Pi 4 (using 64bit OS)");
  });
});
