import { describe, expect, it } from "vitest";
import {
  deployArchiveUrl,
  deployDeviceType,
  deploySearch,
  fleetNameFromContract,
  PENDING_DEPLOY_KEY,
  PENDING_DEPLOY_TTL_MS,
  readPendingDeploy,
  savePendingDeploy,
} from "./deploy.ts";

function memoryStorage() {
  const map = new Map<string, string>();
  return {
    getItem: (key: string) => map.get(key) ?? null,
    setItem: (key: string, value: string) => void map.set(key, value),
    removeItem: (key: string) => void map.delete(key),
    map,
  };
}

describe("deploy with a button", () => {
  it("reads tarballUrl, repoUrl, configUrl and defaultDeviceType from the query", () => {
    expect(
      deploySearch({ repoUrl: " https://github.com/a/b ", tarballUrl: "", other: "x", defaultDeviceType: "intel-nuc" }),
    ).toEqual({
      repoUrl: "https://github.com/a/b",
      defaultDeviceType: "intel-nuc",
    });
  });

  it("remembers the pending deploy for 1 day", () => {
    const storage = memoryStorage();
    savePendingDeploy(storage, { fleetId: 4, repoUrl: "https://github.com/a/b" }, 1000);
    expect(readPendingDeploy(storage, 1000 + PENDING_DEPLOY_TTL_MS - 1)?.fleetId).toBe(4);
    expect(readPendingDeploy(storage, 1000 + PENDING_DEPLOY_TTL_MS)).toBeUndefined();
    expect(storage.map.has(PENDING_DEPLOY_KEY)).toBe(false);
  });

  it("drops an unreadable pending deploy", () => {
    const storage = memoryStorage();
    storage.setItem(PENDING_DEPLOY_KEY, "{");
    expect(readPendingDeploy(storage)).toBeUndefined();
  });

  it("picks the device type from the query, then the contract", () => {
    const contract = {
      name: "x",
      type: "sw.application",
      supportedDeviceTypes: ["raspberrypi3"],
      applicationConfigVariables: [],
      applicationEnvironmentVariables: [],
    };
    expect(deployDeviceType({ defaultDeviceType: "intel-nuc" }, contract, "raspberrypi4-64")).toBe("intel-nuc");
    expect(deployDeviceType({}, { ...contract, defaultDeviceType: "fincm3" }, "raspberrypi4-64")).toBe("fincm3");
    expect(deployDeviceType({}, contract, "raspberrypi4-64")).toBe("raspberrypi3");
    expect(deployDeviceType({}, undefined, "raspberrypi4-64")).toBe("raspberrypi4-64");
  });

  it("makes a fleet name out of the contract name", () => {
    expect(fleetNameFromContract(" Home Assistant! ")).toBe("Home-Assistant");
  });
});

describe("what a deploy builds", () => {
  it("builds from the link's tarball, and from nothing when the link names only a repository", () => {
    expect(deployArchiveUrl({ tarballUrl: "https://example.com/a.tar.gz" })).toBe("https://example.com/a.tar.gz");
    expect(deployArchiveUrl({ repoUrl: "https://github.com/acme/widget" })).toBeUndefined();
  });
});
