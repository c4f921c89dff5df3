import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli.ts";
import { apiWithFleet, eventually, type TestApp } from "./support.ts";

/** `flotilla-agent run` as a process, against the real API: real metrics, actions, clean stop. */
let t: TestApp;
let fleet: { id: number };
let provisioningKey: string;
let ownerToken: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-agent-run-"));
const BIN = path.resolve(import.meta.dirname, "../bin/flotilla-agent.mjs");

beforeAll(async () => {
  const setup = await apiWithFleet();
  ({ t, fleet, provisioningKey } = setup);
  ownerToken = setup.owner.token;
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const relay = async (action: string, body: unknown) => {
  const response = await fetch(`${t.url}/supervisor/v1/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
};

describe("flotilla-agent run", () => {
  it("reports this host's metrics, answers actions, refuses reboot without the flag, stops on SIGTERM", async () => {
    const state = path.join(dir, "agent.json");
    const registered = await main(
      [
        "register",
        "--api",
        t.url,
        "--provisioning-key",
        provisioningKey,
        "--fleet",
        String(fleet.id),
        "--state",
        state,
      ],
      { out: () => {}, err: () => {} },
    );
    expect(registered).toBe(0);
    const identity = JSON.parse(fs.readFileSync(state, "utf8")) as { uuid: string; deviceId: number };
    const child = spawn(process.execPath, [BIN, "run", "--state", state, "--report-interval-ms", "1000"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const row = await eventually(async () => {
        const { rows } = await t.db.query<Record<string, unknown>>(
          "SELECT memory_total, storage_total, os_version, supervisor_version, is_connected_to_vpn FROM device WHERE uuid = $1",
          [identity.uuid],
        );
        return rows[0]?.is_connected_to_vpn && rows[0]?.memory_total ? rows[0] : null;
      }, 25_000);
      expect(row.memory_total).toBe(Math.round(os.totalmem() / 1024 / 1024));
      expect(row.storage_total).toEqual(expect.any(Number));
      expect(row.supervisor_version).toBe("16.7.0");
      expect(await relay("blink", { uuid: identity.uuid })).toEqual({
        status: 200,
        body: { Data: "OK", Error: null },
      });
      expect(await relay("reboot", { deviceId: identity.deviceId, data: { force: true } })).toEqual({
        status: 400,
        body: {
          Data: null,
          Error: "Reboot is not allowed on this device: start flotilla-agent run with --allow-reboot",
        },
      });
      const logs = await eventually(async () => {
        const held = (await t.ctx.devices.logs.history(identity.deviceId, 5000)).map((line) => line.message);
        return held.includes("Blinking") ? held : null;
      });
      expect(logs.some((line) => /^flotilla-agent .* started$/.test(line))).toBe(true);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(out).toContain(`device ${identity.uuid} running against ${t.url}`);
    expect(out).toContain("Blinking");
    expect(out).toContain("action blink → 200");
    expect(out).toContain("action reboot (force) → 400");
    expect(out).toContain("SIGTERM: stopping");
    expect(err).toBe("");
  }, 60_000);
});
