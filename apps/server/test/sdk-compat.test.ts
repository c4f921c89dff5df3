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

describe("balena-sdk auth", () => {
  it("logs in, tells who is logged in, and logs out", async () => {
    const own = getSdk({ apiUrl: t.url, dataDirectory: false });
    expect(await own.auth.isLoggedIn()).toBe(false);
    await expect(own.auth.login({ email: "owner@example.com", password: "wrong-password" })).rejects.toMatchObject({
      code: "BalenaInvalidLoginCredentials",
    });
    await own.auth.login({ email: "owner@example.com", password: "owner-password" });
    expect(await own.auth.isLoggedIn()).toBe(true);
    const me = await own.auth.whoami();
    if (me?.actorType !== "user") throw new Error(`whoami answered ${JSON.stringify(me)}`);
    expect(me.email).toBe("owner@example.com");
    const info = await own.auth.getUserInfo();
    expect(info).toEqual({ id: me.actorTypeId, actor: me.id, email: "owner@example.com", username: me.username });
    await own.auth.logout();
    expect(await own.auth.isLoggedIn()).toBe(false);
  });
});

describe("balena-sdk reads", () => {
  it("lists only the caller's organizations", async () => {
    const orgs = await sdk.models.organization.getAll();
    expect(orgs.map((o) => o.handle)).toEqual(["acme"]);
    await expect(sdk.models.organization.get(theirs.org.handle)).rejects.toMatchObject({
      code: "BalenaOrganizationNotFound",
    });
  });

  it("lists and gets fleets by slug and id, never another organization's", async () => {
    const fleets = await sdk.models.application.getAllDirectlyAccessible();
    expect(fleets.map((f) => f.app_name)).toEqual(["sensors"]);
    // getAll adds the public OS catalogue (balena_os/*) every user reads, and nothing else.
    const readable = await sdk.models.application.getAll({ $select: ["slug"] });
    expect(readable.filter((f) => !f.slug.startsWith("balena_os/")).map((f) => f.slug)).toEqual([mine.fleet.slug]);
    expect((await sdk.models.application.get(mine.fleet.slug)).id).toBe(mine.fleet.id);
    expect((await sdk.models.application.get(mine.fleet.id)).slug).toBe(mine.fleet.slug);
    await expect(sdk.models.application.get(theirs.fleet.slug)).rejects.toMatchObject({
      code: "BalenaApplicationNotFound",
    });
  });

  it("lists the fleets the user holds a role on: a fleet member's one fleet, an administrator's every fleet", async () => {
    const member = await t.factories.user({ email: "member@example.com", password: "member-password" });
    const otherFleet = await t.factories.fleet(mine.org as never, { name: "members-only" });
    await t.factories.fleetMember(member.user, otherFleet, "observer");
    const memberSdk = getSdk({ apiUrl: t.url, dataDirectory: false });
    await memberSdk.auth.login({ email: "member@example.com", password: "member-password" });
    const direct = await memberSdk.models.application.getAllDirectlyAccessible({ $select: ["app_name"] });
    expect(direct.map((f) => f.app_name)).toEqual(["members-only"]);
    const administered = await sdk.models.application.getAllDirectlyAccessible({ $select: ["app_name"] });
    expect(administered.map((f) => f.app_name).sort()).toEqual(["members-only", "sensors"]);
    await t.db.query("DELETE FROM application WHERE id = $1", [otherFleet.id]);
  });

  it("lists devices of a fleet in name order and gets one by uuid", async () => {
    const devices = await sdk.models.device.getAllByApplication(mine.fleet.id, {
      $select: ["device_name", "overall_status"],
    });
    expect(devices.map((d) => d.device_name)).toEqual(["attic", "kitchen"]);
    expect(devices[0]?.overall_status).toBe("inactive");
    const device = await sdk.models.device.get(mine.deviceUuid);
    expect(device.device_name).toBe("kitchen");
    expect(device.belongs_to__application).toEqual({ __id: mine.fleet.id });
    await expect(sdk.models.device.get(theirs.deviceUuid)).rejects.toMatchObject({ code: "BalenaDeviceNotFound" });
  });

  it("answers the complex device query of the SDK's dialect in one request", async () => {
    const { rows } = await t.db.query<{ id: number }>("SELECT id FROM device ORDER BY id");
    const everyId = rows.map((row) => row.id);
    const [kitchen] = await sdk.pine.get({ resource: "device", options: { $filter: { uuid: mine.deviceUuid } } });
    await sdk.models.device.tags.set(mine.deviceUuid, "x", "tagged");
    await sdk.models.device.tags.set(mine.deviceUuid, "b", "2");
    await sdk.models.device.tags.set(mine.deviceUuid, "a", "1");
    const query = (tagKey: string) =>
      sdk.pine.get({
        resource: "device",
        options: {
          $select: ["device_name"],
          $filter: {
            id: { $in: everyId },
            belongs_to__application: {
              $any: {
                $alias: "a",
                $expr: { a: { organization: { $any: { $alias: "o", $expr: { o: { handle: "acme" } } } } } },
              },
            },
            $eq: [{ device_tag: { $count: { $filter: { tag_key: tagKey } } } }, 0],
          },
          $expand: {
            device_tag: { $select: ["tag_key", "value"], $orderby: { tag_key: "asc" }, $top: 2 },
            device_environment_variable: { $count: {} },
          },
          $orderby: { device_name: "asc" },
        },
      });
    // Another organization's devices are among the ids, never in the answer.
    expect((await query("x")).map((d) => d.device_name)).toEqual(["attic"]);
    const untagged = await query("none");
    expect(untagged.map((d) => d.device_name)).toEqual(["attic", "kitchen"]);
    expect(untagged[0]).toEqual({ device_name: "attic", device_tag: [], device_environment_variable: 0 });
    expect(untagged[1]?.device_tag).toEqual([
      { tag_key: "a", value: "1" },
      { tag_key: "b", value: "2" },
    ]);
    await t.db.query("DELETE FROM device_tag WHERE device = $1", [kitchen?.id]);
  });

  it("builds a device's service details from its image installs", async () => {
    const release = await t.factories.release(mine.fleet, { commit: "c0ffee" });
    const { rows: services } = await t.db.query<{ id: number }>(
      "INSERT INTO service (application, service_name) VALUES ($1, 'web') RETURNING id",
      [mine.fleet.id],
    );
    const { rows: images } = await t.db.query<{ id: number }>(
      "INSERT INTO image (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'registry/web', 'success') RETURNING id",
      [services[0]?.id],
    );
    await t.db.query("INSERT INTO release_image (image, is_part_of__release) VALUES ($1, $2)", [
      images[0]?.id,
      release.id,
    ]);
    await t.db.query(
      `INSERT INTO image_install (device, installs__image, is_provided_by__release, status, download_progress)
       SELECT id, $1, $2, 'Running', 100 FROM device WHERE uuid = $3`,
      [images[0]?.id, release.id, mine.deviceUuid],
    );
    const device = await sdk.models.device.getWithServiceDetails(mine.deviceUuid);
    expect(device.current_services_by_app[mine.fleet.slug]?.web?.[0]).toMatchObject({
      status: "Running",
      commit: "c0ffee",
      raw_version: "1.0.0",
      download_progress: 100,
    });
  });

  it("reads the device-type catalogue", async () => {
    const deviceType = await sdk.models.deviceType.get("raspberrypi4-64");
    expect(deviceType.name).toBe("Raspberry Pi 4 (using 64bit OS)");
  });
});

describe("balena-sdk writes", () => {
  it("creates, renames and removes a fleet", async () => {
    const created = await sdk.models.application.create({
      name: "greenhouse",
      deviceType: "raspberrypi4-64",
      organization: "acme",
    });
    expect(created).toMatchObject({ app_name: "greenhouse", slug: "acme/greenhouse", is_of__class: "fleet" });
    await sdk.models.application.rename(created.id, "greenhouse-2");
    expect((await sdk.models.application.get(created.id)).slug).toBe("acme/greenhouse-2");
    await sdk.models.application.remove(created.id);
    await expect(sdk.models.application.get(created.id)).rejects.toMatchObject({ code: "BalenaApplicationNotFound" });
  });

  it("refuses a fleet name the spec does not allow, in balena's words (the dashboard shows the spec's)", async () => {
    await expect(
      sdk.models.application.create({ name: "ab", deviceType: "raspberrypi4-64", organization: "acme" }),
    ).rejects.toThrow("It is necessary that each application has an app name that has a Length (Type)");
    await expect(
      sdk.models.application.create({ name: "SENSORS", deviceType: "raspberrypi4-64", organization: "acme" }),
    ).rejects.toThrow('"organization" and "app_name" must be unique.');
  });

  it("cannot create a fleet in another organization", async () => {
    await expect(
      sdk.models.application.create({
        name: "intruder",
        deviceType: "raspberrypi4-64",
        organization: theirs.org.handle,
      }),
    ).rejects.toBeDefined();
    expect(await t.db.query("SELECT 1 FROM application WHERE app_name = 'intruder'")).toMatchObject({ rows: [] });
  });

  it("pins a fleet to a release and tracks the latest again", async () => {
    const old = await t.factories.release(mine.fleet, { semver: [1, 0, 0] });
    const latest = await t.factories.release(mine.fleet, { semver: [1, 1, 0] });
    await sdk.models.application.pinToRelease(mine.fleet.id, old.commit);
    expect(await sdk.models.application.isTrackingLatestRelease(mine.fleet.id)).toBe(false);
    await sdk.models.application.trackLatestRelease(mine.fleet.id);
    const fleet = await sdk.models.application.get(mine.fleet.id, { $select: ["should_be_running__release"] });
    expect(fleet.should_be_running__release).toEqual({ __id: latest.id });
    const releases = await sdk.models.release.getAllByApplication(mine.fleet.id);
    expect(releases.map((r) => r.id).slice(0, 2)).toEqual([latest.id, old.id]);
    expect((await sdk.models.release.get(old.commit)).raw_version).toBe("1.0.0");
  });

  it("sets, reads and removes fleet variables", async () => {
    await sdk.models.application.envVar.set(mine.fleet.id, "MODE", "eco");
    await sdk.models.application.envVar.set(mine.fleet.id, "MODE", "boost");
    expect(await sdk.models.application.envVar.get(mine.fleet.id, "MODE")).toBe("boost");
    const all = await sdk.models.application.envVar.getAllByApplication(mine.fleet.id);
    expect(all.map((v) => [v.name, v.value])).toEqual([["MODE", "boost"]]);
    await sdk.models.application.envVar.remove(mine.fleet.id, "MODE");
    expect(await sdk.models.application.envVar.get(mine.fleet.id, "MODE")).toBeUndefined();
  });

  it("renames, annotates, pins and removes a device", async () => {
    const extra = await t.factories.device({ id: mine.fleet.id, is_for__device_type: await fleetDeviceType() });
    const release = await t.factories.release(mine.fleet);
    await sdk.models.device.rename(extra.uuid, "porch");
    await sdk.models.device.setNote(extra.uuid, "under the stairs");
    await sdk.models.device.pinToRelease(extra.uuid, release.commit);
    const device = await sdk.models.device.get(extra.uuid, {
      $select: ["device_name", "note", "is_pinned_on__release"],
    });
    expect(device).toMatchObject({
      device_name: "porch",
      note: "under the stairs",
      is_pinned_on__release: { __id: release.id },
    });
    await sdk.models.device.remove(extra.uuid);
    await expect(sdk.models.device.get(extra.uuid)).rejects.toMatchObject({ code: "BalenaDeviceNotFound" });
  });

  it("upserts device variables (409 then PATCH) and tags", async () => {
    await sdk.models.device.envVar.set(mine.deviceUuid, "LEVEL", "1");
    await sdk.models.device.envVar.set(mine.deviceUuid, "LEVEL", "2");
    const vars = await sdk.models.device.envVar.getAllByDevice(mine.deviceUuid);
    expect(vars.map((v) => [v.name, v.value])).toEqual([["LEVEL", "2"]]);
    await sdk.models.device.envVar.remove(mine.deviceUuid, "LEVEL");
    expect(await sdk.models.device.envVar.getAllByDevice(mine.deviceUuid)).toEqual([]);

    await sdk.models.device.tags.set(mine.deviceUuid, "room", "kitchen");
    await sdk.models.device.tags.set(mine.deviceUuid, "room", "pantry");
    const tags = await sdk.models.device.tags.getAllByDevice(mine.deviceUuid);
    expect(tags.map((tag) => [tag.tag_key, tag.value])).toEqual([["room", "pantry"]]);
  });

  it("creates, lists, updates and revokes personal API keys, which then act as the user", async () => {
    const key = await sdk.models.apiKey.create({ name: "ci", expiryDate: null, description: "for the pipeline" });
    expect(typeof key).toBe("string");
    const keys = await sdk.models.apiKey.getAll({ $filter: { name: "ci" } });
    expect(keys).toHaveLength(1);
    const keySdk = getSdk({ apiUrl: t.url, dataDirectory: false });
    await keySdk.auth.loginWithToken(key);
    expect(await keySdk.auth.whoami()).toEqual(await sdk.auth.whoami());
    expect((await keySdk.models.application.getAllDirectlyAccessible()).map((f) => f.app_name)).toEqual(["sensors"]);
    const id = keys[0]?.id ?? 0;
    await sdk.models.apiKey.update(id, { name: "ci-renamed" });
    expect((await sdk.models.apiKey.getAll({ $filter: { id } }))[0]?.name).toBe("ci-renamed");
    await sdk.models.apiKey.revoke(id);
    await expect(keySdk.auth.isLoggedIn()).resolves.toBe(false);
  });

  it("refuses an API key without an expiry choice, and one expiring in the past", async () => {
    const response = await fetch(`${t.url}/api-key/user/full`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await sdk.auth.getToken()}` },
      body: JSON.stringify({ name: "late", expiryDate: "2001-01-01T00:00:00Z" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: "bad_request", message: "expiryDate: must be in the future" });
  });

  it("generates provisioning keys for own fleets only", async () => {
    const key = await sdk.models.application.generateProvisioningKey({
      slugOrUuidOrId: mine.fleet.id,
      keyExpiryDate: null as never,
    });
    expect(typeof key).toBe("string");
    const response = await fetch(`${t.url}/api-key/v2/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await sdk.auth.getToken()}` },
      body: JSON.stringify({ actorType: "application", actorTypeId: theirs.fleet.id, roles: ["provisioning-api-key"] }),
    });
    expect(response.status).toBe(401);
    for (const actorTypeId of [undefined, null]) {
      const missing = await fetch(`${t.url}/api-key/v2/`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${await sdk.auth.getToken()}` },
        body: JSON.stringify({ actorType: "application", actorTypeId, roles: ["provisioning-api-key"] }),
      });
      expect(missing.status).toBe(400);
      expect(missing.headers.get("x-flotilla-error-code")).toBe("missing_provisioning_identifier");
      expect(await missing.json()).toEqual({
        code: "missing_provisioning_identifier",
        message: "missing provisioning identifier",
      });
    }
  });

  it("adds, lists and removes SSH keys, refusing what is not a public key", async () => {
    const publicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGv2c0Q3J6sT0mX8yQ3cK1r9hZQb6mKQ3n9gVt7nVq1k ada@laptop";
    const key = await sdk.models.key.create("laptop", publicKey);
    expect((await sdk.models.key.getAll()).map((k) => k.title)).toEqual(["laptop"]);
    await expect(sdk.models.key.create("junk", "not a key")).rejects.toThrow("The key must be an SSH public key");
    await sdk.models.key.remove(key.id);
    expect(await sdk.models.key.getAll()).toEqual([]);
  });
});

async function fleetDeviceType(): Promise<number> {
  const { rows } = await t.db.query<{ id: number }>("SELECT is_for__device_type AS id FROM application WHERE id = $1", [
    mine.fleet.id,
  ]);
  return rows[0]?.id ?? 0;
}

describe("balena-sdk: settings that are plain data", () => {
  it("grants and revokes support access to a fleet and a device", async () => {
    const until = Date.now() + 5 * 86_400_000;
    await sdk.models.application.grantSupportAccess(mine.fleet.id, until);
    const fleet = await sdk.models.application.get(mine.fleet.id, { $select: "is_accessible_by_support_until__date" });
    expect(new Date(fleet.is_accessible_by_support_until__date ?? 0).getTime()).toBe(until);
    await sdk.models.application.revokeSupportAccess(mine.fleet.id);
    expect(
      (await sdk.models.application.get(mine.fleet.id, { $select: "is_accessible_by_support_until__date" }))
        .is_accessible_by_support_until__date,
    ).toBeNull();
    const supportUntil = async () =>
      (await sdk.models.device.get(mine.deviceUuid, { $select: "is_accessible_by_support_until__date" }))
        .is_accessible_by_support_until__date;
    await sdk.models.device.grantSupportAccess(mine.deviceUuid, until);
    expect(new Date((await supportUntil()) ?? 0).getTime()).toBe(until);
    await sdk.models.device.revokeSupportAccess(mine.deviceUuid);
    expect(await supportUntil()).toBeNull();
  });

  it("edits a release: known issues, note, invalidation, finalization and tags", async () => {
    const draft = await t.factories.release(mine.fleet, { status: "running", semver: [3, 0, 0] });
    await sdk.models.release.setKnownIssueList(draft.id, "Wi-Fi drops");
    await sdk.models.release.setNote(draft.id, "first try");
    await sdk.models.release.setIsInvalidated(draft.id, true);
    await sdk.models.release.tags.set(draft.id, "channel", "beta");
    await sdk.models.release.tags.set(draft.id, "channel", "stable");
    const read = await sdk.models.release.get(draft.id, {
      $select: ["known_issue_list", "note", "is_invalidated", "is_final"],
      $expand: { release_tag: { $select: ["tag_key", "value"] } },
    });
    expect(read).toMatchObject({
      known_issue_list: "Wi-Fi drops",
      note: "first try",
      is_invalidated: true,
      is_final: false,
      release_tag: [{ tag_key: "channel", value: "stable" }],
    });
    await sdk.models.release.finalize(draft.id);
    expect((await sdk.models.release.get(draft.id, { $select: "is_final" })).is_final).toBe(true);
    // Finalizing is one way.
    await expect(sdk.pine.patch({ resource: "release", id: draft.id, body: { is_final: false } })).rejects.toThrow(
      "Finalizing is one way: you will not be able to turn this release back into a draft.",
    );
    await sdk.models.release.tags.remove(draft.id, "channel");
    expect(await sdk.models.release.tags.getAllByRelease(draft.id)).toEqual([]);
  });

  it("sets a device's public URL, local mode, custom location and release tracking", async () => {
    const uuid = mine.deviceUuid;
    // Local mode needs a provisioned device on a development OS.
    await t.db.query(
      `UPDATE device SET os_version = 'balenaOS 5.3.1', os_variant = 'dev', supervisor_version = '16.1.0',
         last_connectivity_event = now() WHERE uuid = $1`,
      [uuid],
    );
    await sdk.models.device.enableDeviceUrl(uuid);
    expect(await sdk.models.device.hasDeviceUrl(uuid)).toBe(true);
    await sdk.models.device.disableDeviceUrl(uuid);
    expect(await sdk.models.device.hasDeviceUrl(uuid)).toBe(false);
    await sdk.models.device.enableLocalMode(uuid);
    expect(await sdk.models.device.isInLocalMode(uuid)).toBe(true);
    await sdk.models.device.disableLocalMode(uuid);
    expect(await sdk.models.device.isInLocalMode(uuid)).toBe(false);
    await sdk.models.device.setCustomLocation(uuid, { latitude: 52.37, longitude: 4.89 });
    expect(await sdk.models.device.get(uuid, { $select: ["custom_latitude", "custom_longitude"] })).toMatchObject({
      custom_latitude: "52.37",
      custom_longitude: "4.89",
    });
    await sdk.models.device.unsetCustomLocation(uuid);
    expect((await sdk.models.device.get(uuid, { $select: "custom_latitude" })).custom_latitude).toBeNull();
    const release = await t.factories.release(mine.fleet, { semver: [4, 0, 0] });
    await sdk.models.device.pinToRelease(uuid, release.commit);
    expect(await sdk.models.device.isTrackingApplicationRelease(uuid)).toBe(false);
    await sdk.models.device.trackApplicationRelease(uuid);
    expect(await sdk.models.device.isTrackingApplicationRelease(uuid)).toBe(true);
  });

  it("sets configuration and service variables of fleets, devices and services", async () => {
    await sdk.models.application.configVar.set(mine.fleet.id, "RESIN_SUPERVISOR_POLL_INTERVAL", "900000");
    expect(await sdk.models.application.configVar.get(mine.fleet.id, "RESIN_SUPERVISOR_POLL_INTERVAL")).toBe("900000");
    await sdk.models.device.configVar.set(mine.deviceUuid, "RESIN_HOST_CONFIG_gpu_mem", "32");
    expect(
      (await sdk.models.device.configVar.getAllByDevice(mine.deviceUuid)).map((v) => [v.name, v.value]),
    ).toContainEqual(["RESIN_HOST_CONFIG_gpu_mem", "32"]);
    const { rows } = await t.db.query<{ id: number }>(
      "INSERT INTO service (application, service_name) VALUES ($1, 'sensor') RETURNING id",
      [mine.fleet.id],
    );
    const serviceId = Number(rows[0]?.id);
    await sdk.models.service.var.set(serviceId, "RATE", "5");
    expect(await sdk.models.service.var.get(serviceId, "RATE")).toBe("5");
    await t.db.query(
      "INSERT INTO service_install (device, installs__service) SELECT id, $1 FROM device WHERE uuid = $2",
      [serviceId, mine.deviceUuid],
    );
    await sdk.models.device.serviceVar.set(mine.deviceUuid, serviceId, "RATE", "10");
    expect(await sdk.models.device.serviceVar.get(mine.deviceUuid, serviceId, "RATE")).toBe("10");
    await sdk.models.device.serviceVar.remove(mine.deviceUuid, serviceId, "RATE");
    expect(await sdk.models.device.serviceVar.get(mine.deviceUuid, serviceId, "RATE")).toBeUndefined();
  });

  it("removes an organization its user administers alone", async () => {
    const created = await sdk.models.organization.create({ name: "Short-lived" });
    expect((await sdk.models.organization.get(created.handle)).name).toBe("Short-lived");
    await sdk.models.organization.remove(created.id);
    await expect(sdk.models.organization.get(created.handle)).rejects.toMatchObject({
      code: "BalenaOrganizationNotFound",
    });
  });
});
