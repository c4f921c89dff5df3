import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * balena's rules for tags and keys (issue compat-3): a POST naming a parent the caller cannot see
 * (or that does not exist) is 401, as balena answers; organization-membership tags follow the
 * tag-key rules of the other tags; a personal API key never revokes itself.
 */
let t: TestApp;
let me: Awaited<ReturnType<TestApp["factories"]["user"]>>;
let membership: number;
let theirs: { device: number; fleet: number; release: number; membership: number };

beforeAll(async () => {
  t = await createTestApp();
  me = await t.factories.user({ email: "tagger@example.com", password: "tagger-password" });
  await t.factories.organization({ name: "Taggers", admins: [me.user] });
  const { rows } = await t.db.query<{ id: number }>(`SELECT id FROM "organization_membership" WHERE "user" = $1`, [
    me.user.id,
  ]);
  membership = Number(rows[0]?.id);
  const stranger = await t.factories.user();
  const otherOrg = await t.factories.organization({ name: "Hidden", admins: [stranger.user] });
  const fleet = await t.factories.fleet(otherOrg, { name: "hidden-fleet" });
  const device = await t.factories.device(fleet);
  const release = await t.factories.release(fleet);
  const other = await t.db.query<{ id: number }>(`SELECT id FROM "organization_membership" WHERE "user" = $1`, [
    stranger.user.id,
  ]);
  theirs = { device: device.id, fleet: fleet.id, release: release.id, membership: Number(other.rows[0]?.id) };
});
afterAll(() => t.close());

describe("tags", () => {
  it.each([
    ["device_tag", "device"],
    ["application_tag", "application"],
    ["release_tag", "release"],
    ["organization_membership_tag", "organization_membership"],
  ] as const)(
    "POST %s naming a parent that does not exist, or another tenant's, answers 401",
    async (resource, parent) => {
      const hidden = {
        device: theirs.device,
        application: theirs.fleet,
        release: theirs.release,
        organization_membership: theirs.membership,
      }[parent];
      for (const id of [999_999, hidden]) {
        const response = await call(t, "POST", `/v7/${resource}`, me.token, {
          [parent]: id,
          tag_key: "site",
          value: "x",
        });
        expect(response.status, `${resource} ${id}`).toBe(401);
      }
    },
  );

  it("balena-sdk's device.tags.set on a device it cannot see says it is not found", async () => {
    const sdk: BalenaSDK = getSdk({ apiUrl: t.url, dataDirectory: false });
    await sdk.auth.login({ email: "tagger@example.com", password: "tagger-password" });
    await expect(sdk.models.device.tags.set(theirs.device, "site", "x")).rejects.toMatchObject({
      code: "BalenaDeviceNotFound",
    });
  });

  it("organization-membership tags follow the tag-key rules (reserved prefixes, no whitespace)", async () => {
    const post = (tag_key: string) =>
      call(t, "POST", "/v7/organization_membership_tag", me.token, {
        organization_membership: membership,
        tag_key,
        value: "v",
      });
    for (const [key, text] of [
      ["io.resin.x", "Tag keys beginning with io.resin. are reserved."],
      ["io.balena.x", "Tag keys beginning with io.balena. are reserved."],
      ["a b", "Tag keys cannot contain whitespace."],
    ] as const) {
      const refused = await post(key);
      expect(refused.status).toBe(400);
      expect(refused.text).toBe(text);
    }
    expect((await post("team")).status).toBe(201);
  });
});

describe("personal API keys", () => {
  it("read their owner's keys but never delete themselves (balena api-key revoke says why)", async () => {
    const created = await call(t, "POST", "/api-key/user/full", me.token, { name: "ci", expiryDate: null });
    expect(created.status).toBe(200);
    const key = created.json as unknown as string;
    const other = await call(t, "POST", "/api-key/user/full", me.token, { name: "other", expiryDate: null });
    expect(other.status).toBe(200);
    const list = await call(t, "GET", "/v7/api_key?$select=id,name&$filter=name eq 'ci' or name eq 'other'", key);
    const rows = (list.json as { d: Array<{ id: number; name: string }> }).d;
    expect(rows.map((row) => row.name).sort()).toEqual(["ci", "other"]);
    const self = rows.find((row) => row.name === "ci")?.id;
    const refused = await call(t, "DELETE", `/v7/api_key(${self})`, key);
    expect(refused.status).toBe(403);
    expect(refused.text).toBe(
      "This API key is the one in use and cannot revoke itself: sign in with your password (or another key) to revoke it.",
    );
    const byFilter = await call(t, "DELETE", "/v7/api_key?$filter=name eq 'ci'", key);
    expect(byFilter.status).toBe(403);
    expect((await call(t, "GET", "/v7/api_key?$select=id&$filter=name eq 'ci'", key)).status).toBe(200);
    // Another of the owner's keys goes; the session may revoke this one.
    expect((await call(t, "DELETE", "/v7/api_key?$filter=name eq 'other'", key)).status).toBe(200);
    expect((await call(t, "DELETE", `/v7/api_key(${self})`, me.token)).status).toBe(200);
  });
});
