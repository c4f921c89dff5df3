import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configFile, currentLogin, readConfig, writeConfig } from "./config.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function env(extra: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-cli-config-"));
  dirs.push(dir);
  return { FLOTILLA_CONFIG_DIR: path.join(dir, "nested"), ...extra };
}

describe("config file", () => {
  it("is written readable by its owner only and read back", () => {
    const e = env();
    expect(readConfig(e)).toBeNull();
    const file = writeConfig(e, { apiUrl: "http://localhost:8081", token: "t0k3n" });
    expect(file).toBe(path.join(e.FLOTILLA_CONFIG_DIR, "config.json"));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(e.FLOTILLA_CONFIG_DIR).mode & 0o777).toBe(0o700);
    expect(readConfig(e)).toEqual({ apiUrl: "http://localhost:8081", token: "t0k3n" });
    expect(currentLogin(e)).toEqual({ apiUrl: "http://localhost:8081", token: "t0k3n", fromEnv: false });
    writeConfig(e, { apiUrl: "http://localhost:8081" });
    expect(currentLogin(e)).toBeNull();
    expect(fs.readdirSync(e.FLOTILLA_CONFIG_DIR)).toEqual(["config.json"]);
  });

  it("defaults to ~/.flotilla/config.json", () => {
    expect(configFile({})).toBe(path.join(os.homedir(), ".flotilla", "config.json"));
  });

  it("names a broken file", () => {
    const e = env();
    fs.mkdirSync(e.FLOTILLA_CONFIG_DIR, { recursive: true });
    fs.writeFileSync(configFile(e), "{not json");
    expect(() => readConfig(e)).toThrow(/config.json is not valid JSON: delete it and run flotilla login/);
    fs.writeFileSync(configFile(e), "[]");
    expect(() => readConfig(e)).toThrow(/is not a Flotilla CLI configuration/);
  });

  it("lets FLOTILLA_TOKEN and FLOTILLA_API_URL stand in for a login", () => {
    expect(currentLogin(env({ FLOTILLA_TOKEN: "key", FLOTILLA_API_URL: "http://api.test/" }))).toEqual({
      apiUrl: "http://api.test",
      token: "key",
      fromEnv: true,
    });
    const e = env({ FLOTILLA_TOKEN: "key" });
    writeConfig(e, { apiUrl: "http://saved.test", token: "saved" });
    expect(currentLogin(e)).toEqual({ apiUrl: "http://saved.test", token: "key", fromEnv: true });
  });
});
