import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, createTestApp, runCli, type TestApp, tempDir } from "./support.ts";

/**
 * `flotilla rollout status|pause|resume|abort FLEET` against the real API: a halted rollout
 * (rows as the server's engine leaves them, docs/rollouts.md) shown and steered, and the refusals
 * in the CLI's words.
 */
let t: TestApp;
let configDir: string;
let observerConfig: string;
const made: string[] = [];
const shown = (run: CliRun) => `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user({
    email: "roller@example.com",
    password: "roller-password-1",
    username: "roller",
  });
  const observer = await t.factories.user({
    email: "watcher@example.com",
    password: "watcher-password-1",
    username: "watcher",
  });
  const org = await t.factories.organization({ name: "RollCo", admins: [owner.user] });
  const fleet = await t.factories.fleet(org, { name: "rollfleet" });
  await t.factories.fleet(org, { name: "quietfleet" });
  await t.factories.fleetMember(observer.user, fleet, "observer");
  const from = await t.factories.release(fleet);
  const to = await t.factories.release(fleet);
  // The rollout's release is the fleet's (else the engine ends it as overridden).
  await t.db.query(`UPDATE "application" SET should_be_running__release = $1 WHERE id = $2`, [to.id, fleet.id]);
  const { rows } = await t.db.query<{ id: number }>(
    `INSERT INTO "rollout" (belongs_to__application, from__release, to__release, status, reason, current_wave, wave_count, policy)
     VALUES ($1, $2, $3, 'halted', 'wave 1 failed: 2 of 3 devices failed', 0, 2, '{"waves":[]}') RETURNING id`,
    [fleet.id, from.id, to.id],
  );
  await t.db.query(
    `INSERT INTO "rollout_wave" (rollout, wave_index, name, state, reason, device_count, healthy_count, failed_count, pending_count)
     VALUES ($1, 0, 'canary', 'rolled_back', '2 of 3 devices failed', 3, 1, 2, 0), ($1, 1, 'rest', 'pending', NULL, 17, 0, 0, 17)`,
    [rows[0]?.id],
  );
  configDir = tempDir("flotilla-cli-rollout-", made);
  observerConfig = tempDir("flotilla-cli-rollout-observer-", made);
  const login = await runCli(["login", "--api", t.url, "--email", "roller@example.com"], {
    configDir,
    input: "roller-password-1\n",
  });
  expect(login.code, shown(login)).toBe(0);
  const observerLogin = await runCli(["login", "--api", t.url, "--email", "watcher@example.com"], {
    configDir: observerConfig,
    input: "watcher-password-1\n",
  });
  expect(observerLogin.code, shown(observerLogin)).toBe(0);
});
afterAll(async () => {
  await t?.close();
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

describe("flotilla rollout", () => {
  it("status prints the latest rollout with its reason and each wave's counts", async () => {
    const run = await runCli(["rollout", "status", "RollCo/rollfleet"], { configDir });
    expect(run.code, shown(run)).toBe(0);
    expect(run.stdout).toContain("of rollco/rollfleet: halted");
    expect(run.stdout).toContain("Reason: wave 1 failed: 2 of 3 devices failed");
    expect(run.stdout).toMatch(/WAVE +NAME +STATE +DEVICES +HEALTHY +FAILED +PENDING/);
    expect(run.stdout).toMatch(/1 +canary +rolled_back +3 +1 +2 +0/);
    expect(run.stdout).toMatch(/2 +rest +pending +17 +0 +0 +17/);
  });

  it("refuses a control the status does not allow, and a reader's control, in words", async () => {
    const pause = await runCli(["rollout", "pause", "rollfleet"], { configDir });
    expect(pause.code, shown(pause)).toBe(1);
    expect(pause.stderr).toContain("Cannot pause the rollout: cannot pause a rollout that is halted");
    const byObserver = await runCli(["rollout", "abort", "rollfleet"], { configDir: observerConfig });
    expect(byObserver.code, shown(byObserver)).toBe(1);
    expect(byObserver.stderr).toContain("You may not abort this fleet's rollout");
  });

  it("resume and abort steer it", async () => {
    const resume = await runCli(["rollout", "resume", "rollfleet"], { configDir });
    expect(resume.code, shown(resume)).toBe(0);
    expect(resume.stdout).toMatch(/Rollout \d+ of rollco\/rollfleet resumed\./);
    expect(resume.stdout).toContain(": running");
    const abort = await runCli(["rollout", "abort", "rollfleet"], { configDir });
    expect(abort.code, shown(abort)).toBe(0);
    expect(abort.stdout).toContain(": aborted");
  });

  it("says so when the fleet has no rollout, and names a bad action", async () => {
    const none = await runCli(["rollout", "status", "quietfleet"], { configDir });
    expect(none.code, shown(none)).toBe(1);
    expect(none.stderr).toContain("rollco/quietfleet has no rollout");
    const bad = await runCli(["rollout", "explode", "rollfleet"], { configDir });
    expect(bad.code, shown(bad)).toBe(2);
    expect(bad.stderr).toContain('unknown rollout action "explode"');
  });
});
