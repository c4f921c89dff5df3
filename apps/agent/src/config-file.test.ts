import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isRegistryHost, readConfigFile } from "./config-file.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-config-file-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const base = { apiEndpoint: "https://api.example.com", apiKey: "key", applicationId: 12 };
function write(config: Record<string, unknown>) {
  const file = path.join(dir, "config.json");
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

describe("the device configuration file (register --config)", () => {
  it("reads registryEndpoint, the registry that gets the device's credentials", () => {
    expect(readConfigFile(write({ ...base, registryEndpoint: "registry.example.com" }))).toMatchObject({
      apiEndpoint: "https://api.example.com",
      applicationId: 12,
      registryEndpoint: "registry.example.com",
    });
    expect(readConfigFile(write({ ...base, registryEndpoint: "127.0.0.1:5055" })).registryEndpoint).toBe(
      "127.0.0.1:5055",
    );
    // A server without a registry leaves it out: no registry is known.
    expect(readConfigFile(write(base)).registryEndpoint).toBeUndefined();
  });

  it("refuses a registryEndpoint that is not host[:port]", () => {
    for (const bad of ["https://registry.example.com", "registry.example.com/v2", "", 5055]) {
      expect(() => readConfigFile(write({ ...base, registryEndpoint: bad })), String(bad)).toThrow(
        '"registryEndpoint" that is not host[:port]',
      );
    }
  });

  it("knows a registry host as image names start with it", () => {
    for (const good of ["registry.example.com", "Registry.Example.com:443", "localhost:5000", "[::1]:5000"]) {
      expect(isRegistryHost(good), good).toBe(true);
    }
    for (const bad of ["http://x", "x/y", "x:port", "user@x", " x"]) expect(isRegistryHost(bad), bad).toBe(false);
  });
});
