import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * The words balena's clients match on (issue compat-3): balena-cli's `fleet create` and `fleet
 * rename` look for "unique" and "name may only contain", pinejs-client's upsert for /unique/ in a
 * 409; a broken data rule reads as balena's "It is necessary that each …". The dashboard keeps the
 * spec's texts: the API sends their params in x-flotilla-error-params (apps/web lib/errors.ts).
 */
let t: TestApp;
let sdk: BalenaSDK;
let org: Awaited<ReturnType<TestApp["factories"]["organization"]>>;

const paramsOf = (error: unknown) => {
  const header = (error as { responseHeaders?: Headers }).responseHeaders?.get("x-flotilla-error-params");
  return header ? (JSON.parse(decodeURIComponent(header)) as Record<string, string>) : undefined;
};

beforeAll(async () => {
  t = await createTestApp();
  const me = await t.factories.user();
  org = await t.factories.organization({ name: "Wording", admins: [me.user] });
  await t.factories.fleet(org, { name: "taken-name" });
  await t.factories.organization({ name: "Taken org", admins: [me.user] });
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(me.token);
});
afterAll(() => t.close());

describe("duplicate names say 'unique'", () => {
  it("application.create and application.rename, as balena-cli's fleet create and rename match them", async () => {
    const created = await sdk.models.application
      .create({ name: "TAKEN-NAME", deviceType: "raspberrypi4-64", organization: org.handle })
      .catch((error: unknown) => error as Error);
    expect(created).toMatchObject({ statusCode: 409, message: expect.stringMatching(/unique/) });
    expect((created as Error).message).toContain('"organization" and "app_name" must be unique.');
    expect(paramsOf(created)).toEqual({ type: "fleet" });
    const other = await t.factories.fleet(org, { name: "other-name" });
    await expect(sdk.models.application.rename(other.id, "taken-name")).rejects.toThrow(/unique/);
  });

  it("organization.create and team.create", async () => {
    await expect(sdk.models.organization.create({ name: "TAKEN ORG" })).rejects.toThrow('"name" must be unique.');
    await sdk.models.team.create(org.id, "Crew");
    await expect(sdk.models.team.create(org.id, "crew")).rejects.toThrow(/unique/);
  });

  it("a fleet name with other characters says balena's 'App name may only contain'", async () => {
    const other = await t.factories.fleet(org, { name: "renamed-one" });
    const renamed = await sdk.models.application.rename(other.id, "with space").catch((error: unknown) => error);
    expect(renamed).toMatchObject({ statusCode: 400 });
    expect((renamed as Error).message.toLowerCase()).toContain("name may only contain");
    expect(paramsOf(renamed)).toEqual({
      problem: "The name can only contain alphanumeric characters, hyphens or underscores",
    });
  });
});

describe("data rules read as balena's", () => {
  it("device.pinToRelease of another fleet's release (pine.patch as the SDK sends it)", async () => {
    const fleet = await t.factories.fleet(org, { name: "pinned-fleet" });
    const device = await t.factories.device(fleet);
    const elsewhere = await t.factories.release(await t.factories.fleet(org, { name: "elsewhere" }));
    await expect(
      sdk.pine.patch({ resource: "device", id: device.id, body: { is_pinned_on__release: elsewhere.id } }),
    ).rejects.toThrow(
      'It is necessary that each release that is pinned to a device, has a status that is equal to "success" and belongs to an application1 that the device belongs to.',
    );
  });
});
