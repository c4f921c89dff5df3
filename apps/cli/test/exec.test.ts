import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, createTestApp, runCli, type TestApp, tempDir } from "./support.ts";

/**
 * `flotilla exec` against the real API and real simulated devices (the agent's simulator in this
 * process, on the real cloudlink protocol): output prefixed by device name as it streams, the
 * summary line, and the exit code that says whether every device succeeded.
 */

type SimDevice = { uuid: string; deviceId: number; runtime: { start(): void; stop(): void } };
type Simulator = { devices: SimDevice[]; stop(): Promise<void> };
// The agent is loaded at run time (the CLI does not import other apps).
const agentModule = new URL("../../agent/src/index.ts", import.meta.url).href;
const { startSimulator } = (await import(/* @vite-ignore */ agentModule)) as {
  startSimulator(options: Record<string, unknown>): Promise<Simulator>;
};

let t: TestApp;
let configDir: string;
let simulator: Simulator;
const made: string[] = [];
const shown = (run: CliRun) => `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user({
    email: "runner@example.com",
    password: "runner-password-1",
    username: "runner",
  });
  const org = await t.factories.organization({ name: "ExecCo", admins: [owner.user] });
  const fleet = await t.factories.fleet(org, { name: "execfleet" });
  const response = await fetch(`${t.url}/api-key/v2/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${owner.token}` },
    body: JSON.stringify({ actorType: "application", actorTypeId: fleet.id, roles: ["provisioning-api-key"] }),
  });
  const provisioningKey = (await response.json()) as string;
  simulator = await startSimulator({
    apiUrl: t.url,
    provisioningKey,
    fleetId: fleet.id,
    count: 3,
    intervalMs: 300,
    disconnectChance: 0,
    log: () => undefined,
  });
  for (const [index, device] of simulator.devices.entries()) {
    await t.db.query(`UPDATE device SET device_name = $1 WHERE id = $2`, [`dev-${index}`, device.deviceId]);
  }
  const until = Date.now() + 20_000;
  for (;;) {
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM device WHERE belongs_to__application = $1 AND os_version IS NOT NULL`,
      [fleet.id],
    );
    const online = simulator.devices.every((d) => t.ctx.devices.relay.isConnectedHere(d.deviceId));
    if (rows[0]?.n === 3 && online) break;
    if (Date.now() > until) throw new Error("the simulated devices did not come up");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  configDir = tempDir("flotilla-cli-exec-", made);
  const login = await runCli(["login", "--api", t.url, "--email", "runner@example.com"], {
    configDir,
    input: "runner-password-1\n",
  });
  expect(login.code, shown(login)).toBe(0);
}, 40_000);
afterAll(async () => {
  await simulator?.stop();
  await t?.close();
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

describe("flotilla exec", () => {
  it("runs on a whole fleet: each device's output prefixed by its name, a summary, exit 0", async () => {
    const run = await runCli(["exec", "ExecCo/execfleet", "--", "uname", "-a"], { configDir });
    expect(run.code, shown(run)).toBe(0);
    for (const [index, device] of simulator.devices.entries()) {
      expect(run.stdout).toContain(
        `dev-${index}: Linux ${device.uuid.slice(0, 7)} 6.1.77 #1 SMP PREEMPT aarch64 GNU/Linux`,
      );
    }
    expect(run.stdout.trim().split("\n").at(-1)).toBe("3 devices: 3 succeeded, 0 failed, 0 timed out, 0 offline");
  });

  it("exits 1 when a device fails, times out or is offline, and says why", async () => {
    const [first, second] = simulator.devices as [SimDevice, SimDevice];
    const failing = await runCli(["exec", "--device", first.uuid, "--device", second.uuid, "--", "exit 2"], {
      configDir,
    });
    expect(failing.code, shown(failing)).toBe(1);
    expect(failing.stderr).toMatch(/dev-0: failed exit 2/);
    expect(failing.stdout).toContain("2 devices: 0 succeeded, 2 failed, 0 timed out, 0 offline");

    const slow = await runCli(["exec", "--device", first.uuid, "--timeout", "1", "--", "sleep 20"], { configDir });
    expect(slow.code, shown(slow)).toBe(1);
    expect(slow.stdout).toContain("1 device: 0 succeeded, 0 failed, 1 timed out, 0 offline");

    second.runtime.stop();
    const until = Date.now() + 5000;
    while (t.ctx.devices.relay.isConnectedHere(second.deviceId) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const offline = await runCli(
      ["exec", "--device", first.uuid, "--device", second.uuid, "--json", "--", "hostname"],
      {
        configDir,
      },
    );
    second.runtime.start();
    expect(offline.code, shown(offline)).toBe(1);
    const detail = JSON.parse(offline.stdout) as { summary: Record<string, number>; devices: { state: string }[] };
    expect(detail.summary).toMatchObject({ succeeded: 1, offline: 1, total: 2 });
  });

  it("refuses bad usage with exit code 2", async () => {
    const noCommand = await runCli(["exec", "ExecCo/execfleet"], { configDir });
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toContain("missing the command after --");
    const both = await runCli(["exec", "ExecCo/execfleet", "--device", "abcdef0", "--", "ls"], { configDir });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("name either a fleet or --device");
    const badTimeout = await runCli(["exec", "--device", "abcdef0", "--timeout", "0", "--", "ls"], { configDir });
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toContain("--timeout must be a whole number from 1 to 3600");
  });
});
