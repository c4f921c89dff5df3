import fs from "node:fs";
import path from "node:path";
import { type BalenaSDK, getSdk } from "balena-sdk";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRegistryKeys } from "../src/features/registry/keys.ts";
import { runBuild } from "../src/features/releases/builder.ts";
import type { ImageEngine } from "../src/features/releases/image-engine.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";
import { tarOf } from "./support/tar.ts";

/**
 * A fleet's build variables (balena's `build_environment_variable`, balena-sdk
 * `application.buildVar`): written by developers, hidden from observers, checked like other
 * variables, and given to every build of the fleet as build arguments.
 */
let t: TestApp;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let owner: BalenaSDK;
let observer: BalenaSDK;

const sdkAs = async (token: string) => {
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(token);
  return sdk;
};

beforeAll(async () => {
  t = await createTestApp({ FLOTILLA_REGISTRY_URL: "http://127.0.0.1:5999" });
  const admin = await t.factories.user();
  const org = await t.factories.organization({ name: "Builds", admins: [admin.user] });
  fleet = await t.factories.fleet(org, { name: "built" });
  const watcher = await t.factories.user();
  await t.factories.fleetMember(watcher.user, fleet, "observer");
  owner = await sdkAs(admin.token);
  observer = await sdkAs(watcher.token);
});
afterAll(() => t.close());

describe("build variables", () => {
  it("are set, read and removed with balena-sdk, and hidden from observers", async () => {
    await owner.models.application.buildVar.set(fleet.id, "NPM_TOKEN", "secret");
    await owner.models.application.buildVar.set(fleet.id, "GREETING", "hello");
    await owner.models.application.buildVar.set(fleet.id, "GREETING", "hi");
    expect(await owner.models.application.buildVar.get(fleet.id, "GREETING")).toBe("hi");
    const all = await owner.models.application.buildVar.getAllByApplication(fleet.id);
    expect(all.map((v) => [v.name, v.value]).sort()).toEqual([
      ["GREETING", "hi"],
      ["NPM_TOKEN", "secret"],
    ]);
    expect(await observer.models.application.buildVar.getAllByApplication(fleet.id)).toEqual([]);
    await owner.models.application.buildVar.remove(fleet.id, "NPM_TOKEN");
    expect(await owner.models.application.buildVar.get(fleet.id, "NPM_TOKEN")).toBeUndefined();
  });

  it("refuses a name other variables may not have, and observers' writes", async () => {
    const bad = await call(t, "POST", "/v7/build_environment_variable", undefined, {});
    expect(bad.status).toBe(401);
    await expect(owner.models.application.buildVar.set(fleet.id, "1BAD", "x")).rejects.toThrow();
    await expect(observer.models.application.buildVar.set(fleet.id, "MINE", "x")).rejects.toThrow();
    expect(await owner.models.application.buildVar.get(fleet.id, "MINE")).toBeUndefined();
  });

  it("are the build arguments of the fleet's builds, under the compose file's own args", async () => {
    const archive = path.join(t.config.dataDir, "project.tar");
    const compose = "services:\n  main:\n    build:\n      context: .\n      args:\n        PINNED: compose\n";
    const files = { "docker-compose.yml": compose, Dockerfile: "FROM scratch\nARG GREETING\n" };
    fs.writeFileSync(archive, await tarOf(files));
    const builds: { buildargs: Record<string, string> }[] = [];
    // Records what the builder asks of its engine; the image "exists" at once.
    const engine = {
      async build(_context: unknown, options: { buildargs: Record<string, string> }) {
        builds.push(options);
      },
      push: async () => "sha256:0000000000000000000000000000000000000000000000000000000000000000",
      size: async () => 1,
      untag: async () => undefined,
    } as unknown as ImageEngine;
    await owner.models.application.buildVar.set(fleet.id, "PINNED", "fleet");
    const status = await runBuild(
      t.db,
      pino({ level: "silent" }),
      {
        fleet: fleet.id,
        user: undefined,
        files: new Map(Object.entries(files)),
        draft: false,
        note: undefined,
        archive: { file: archive, stripTop: false },
        builder: { engine, registryHost: "127.0.0.1:5999", keys: loadRegistryKeys(t.config), mirror: false },
      },
      () => undefined,
    );
    expect(status.status).toBe("success");
    expect(builds).toHaveLength(1);
    expect(builds[0]?.buildargs).toEqual({ GREETING: "hi", PINNED: "compose" });
  });
});
