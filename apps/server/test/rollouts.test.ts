import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRolloutEngine } from "../src/features/rollouts/engine.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Phased rollouts (issue #23, docs/rollouts.md): a three-wave policy (canary tag, 25 %, the rest)
 * over 20 devices that report through the real device API; the engine is driven by its own
 * report hook and tick.
 */
let t: TestApp;
type TestUser = Awaited<ReturnType<TestApp["factories"]["user"]>>;
let owner: TestUser;
let observer: TestUser;
let stranger: TestUser;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let devices: TestDevice[];
let pinned: TestDevice;
let canaries: TestDevice[];
type Release = { id: number; commit: string };
let releaseA: Release;
let releaseB: Release;

const POLICY = {
  waves: [
    { name: "canary", selector: { type: "tag", key: "canary", value: "yes" } },
    { name: "quarter", selector: { type: "share" }, size: { percent: 25 } },
    { name: "rest", selector: { type: "share" } },
  ],
  rollback_on_halt: true,
};

/** A release with one service `main`, not final yet: finalizing it through /v7 is what starts a rollout. */
async function draftRelease(target: { id: number }): Promise<Release> {
  const row = await t.factories.release(target);
  await t.db.query(`UPDATE "release" SET is_final = false, is_finalized_at__date = NULL WHERE id = $1`, [row.id]);
  const { rows } = await t.db.query<{ id: number }>(
    `INSERT INTO "service" (application, service_name) VALUES ($1, 'main')
       ON CONFLICT (application, service_name) DO UPDATE SET service_name = EXCLUDED.service_name RETURNING id`,
    [target.id],
  );
  const { rows: images } = await t.db.query<{ id: number }>(
    `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'nginx:1.27', 'success') RETURNING id`,
    [rows[0]?.id],
  );
  await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [images[0]?.id, row.id]);
  return { id: row.id, commit: row.commit };
}

async function finalize(release: Release) {
  const answer = await call(t, "PATCH", `/v7/release(${release.id})`, owner.token, { is_final: true });
  expect(answer.status).toBe(200);
}

type Report = { running: Release; on?: Release; service?: string; update?: string };

/** The device's current state report: running `running`, with `on`'s service status (default Running). */
async function report(device: TestDevice, { running, on = running, service = "Running", update = "done" }: Report) {
  const answer = await call(t, "PATCH", "/device/v3/state", device.key, {
    [device.uuid]: {
      status: "Idle",
      update_status: update,
      apps: {
        [fleet.uuid]: {
          release_uuid: running.commit,
          releases: {
            [on.commit]: { update_status: update, services: { main: { image: "nginx:1.27", status: service } } },
          },
        },
      },
    },
  });
  expect(answer.status).toBe(200);
}

/** Reports reach the database (which re-judges the wave), then the tick runs as it would every few seconds. */
async function settle() {
  await t.ctx.devices.heartbeat.sweep();
  await t.ctx.devices.reports.flush();
  await t.ctx.rollouts.tick();
}

/** Every target ever answered, by device: a device that ever targeted a release is in its set. */
const everTargeted = new Map<number, Set<string>>();

async function targetOf(device: TestDevice): Promise<string | undefined> {
  const answer = await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key);
  expect(answer.status).toBe(200);
  const state = answer.json as Record<string, { apps: Record<string, { releases: Record<string, unknown> }> }>;
  const commit = Object.keys(state[device.uuid]?.apps[fleet.uuid]?.releases ?? {})[0];
  const seen = everTargeted.get(device.id) ?? new Set();
  if (commit) seen.add(commit);
  everTargeted.set(device.id, seen);
  return commit;
}

async function targets(list: TestDevice[]) {
  return Promise.all(list.map(targetOf));
}

async function latestRollout(token = owner.token) {
  const answer = await call(
    t,
    "GET",
    `/v7/rollout?$filter=belongs_to__application eq ${fleet.id}&$orderby=id desc&$top=1&$expand=rollout_wave,rollout_device`,
    token,
  );
  expect(answer.status).toBe(200);
  const rollout = (answer.json as { d: RolloutResource[] }).d[0];
  rollout?.rollout_wave.sort((a, b) => a.wave_index - b.wave_index);
  return rollout;
}

type RolloutResource = {
  id: number;
  status: string;
  reason: string | null;
  current_wave: number;
  to__release: { __id: number };
  rollout_wave: {
    wave_index: number;
    state: string;
    device_count: number;
    healthy_count: number;
    failed_count: number;
  }[];
  rollout_device: { device: { __id: number }; wave_index: number; health: string }[];
};

const waveOf = (rollout: RolloutResource, index: number) =>
  devices.filter((d) => rollout.rollout_device.some((rd) => rd.device.__id === d.id && rd.wave_index === index));

const control = (id: number, action: string, token = owner.token) =>
  call(t, "POST", `/rollout/v1/${id}/${action}`, token);

beforeAll(async () => {
  t = await createTestApp();
  owner = await t.factories.user();
  observer = await t.factories.user();
  stranger = await t.factories.user();
  const org = await t.factories.organization({ name: "Rollouts", admins: [owner.user], plan: "production-v2" });
  await t.factories.organization({ name: "Elsewhere", admins: [stranger.user] });
  fleet = await t.factories.fleet(org, { name: "rolling" });
  await t.factories.fleetMember(observer.user, fleet, "observer");
  const key = await provisioningKeyFor(t, owner.token, fleet.id);
  devices = [];
  for (let i = 0; i < 20; i += 1) devices.push(await registerDevice(t, key, fleet));
  pinned = await registerDevice(t, key, fleet);
  canaries = devices.slice(0, 3);
  for (const canary of canaries) {
    const tagged = await call(t, "POST", "/v7/device_tag", owner.token, {
      device: canary.id,
      tag_key: "canary",
      value: "yes",
    });
    expect(tagged.status).toBe(201);
  }
  releaseA = await draftRelease(fleet);
  await finalize(releaseA);
  // The pinned device stays on A whatever happens.
  expect(
    (await call(t, "PATCH", `/v7/device(${pinned.id})`, owner.token, { is_pinned_on__release: releaseA.id })).status,
  ).toBe(200);
  for (const device of [...devices, pinned]) await report(device, { running: releaseA });
  await settle();
});
afterAll(() => t.close());

describe("release policy", () => {
  it("is off by default: a new release reaches every device at once, with no rollout", async () => {
    expect(await latestRollout()).toBeUndefined();
    expect(new Set(await targets(devices))).toEqual(new Set([releaseA.commit]));
  });

  it("refuses a bad policy with the problem named, and an observer's policy", async () => {
    const bad = await call(t, "POST", "/v7/release_policy", owner.token, {
      application: fleet.id,
      policy: { waves: [{ selector: { type: "share" }, halt_failure_ratio: 3 }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("waves.0.halt_failure_ratio: halt_failure_ratio must be from 0 to 1");
    const byObserver = await call(t, "POST", "/v7/release_policy", observer.token, {
      application: fleet.id,
      policy: POLICY,
    });
    expect(byObserver.status).toBeGreaterThanOrEqual(401);
    expect(byObserver.status).toBeLessThan(500);
    const created = await call(t, "POST", "/v7/release_policy", owner.token, { application: fleet.id, policy: POLICY });
    expect(created.status).toBe(201);
    // Stored with its defaults filled in.
    expect((created.json as { policy: typeof POLICY }).policy.waves[1]).toMatchObject({
      soak_seconds: 0,
      healthy_share: 1,
      halt_failure_ratio: 0,
    });
  });
});

describe("a good release", () => {
  it("goes wave by wave to every device, and never to the pinned one", async () => {
    releaseB = await draftRelease(fleet);
    await finalize(releaseB);
    let rollout = await latestRollout();
    expect(rollout).toMatchObject({ status: "running", current_wave: 0, to__release: { __id: releaseB.id } });
    expect(rollout?.rollout_wave.map((w) => [w.state, w.device_count])).toEqual([
      ["active", 3],
      ["pending", 5],
      ["pending", 12],
    ]);
    if (!rollout) throw new Error("no rollout");
    // The canaries are wave 1; the pinned device has no wave.
    expect(new Set(waveOf(rollout, 0).map((d) => d.id))).toEqual(new Set(canaries.map((d) => d.id)));
    expect(rollout.rollout_device.some((rd) => rd.device.__id === pinned.id)).toBe(false);
    const wave2 = waveOf(rollout, 1);
    const wave3 = waveOf(rollout, 2);

    expect(await targets(canaries)).toEqual(canaries.map(() => releaseB.commit));
    expect(new Set(await targets([...wave2, ...wave3, pinned]))).toEqual(new Set([releaseA.commit]));

    // Canaries still downloading: the wave waits.
    for (const canary of canaries)
      await report(canary, { running: releaseA, on: releaseB, service: "Downloading", update: "downloading" });
    await settle();
    rollout = await latestRollout();
    expect(rollout?.current_wave).toBe(0);
    expect(rollout?.rollout_wave[0]).toMatchObject({ state: "active", healthy_count: 0, failed_count: 0 });

    // Canaries healthy: wave 2 starts, wave 3 waits; a second instance judging at the same time changes nothing.
    for (const canary of canaries) await report(canary, { running: releaseB });
    const otherInstance = createRolloutEngine({ db: t.db, devices: t.ctx.devices });
    await t.ctx.devices.heartbeat.sweep();
    await t.ctx.devices.reports.flush();
    await Promise.all([t.ctx.rollouts.tick(), otherInstance.tick(), otherInstance.tick()]);
    rollout = await latestRollout();
    expect(rollout?.rollout_wave.map((w) => w.state)).toEqual(["passed", "active", "pending"]);
    expect(new Set(await targets(wave2))).toEqual(new Set([releaseB.commit]));
    expect(new Set(await targets(wave3))).toEqual(new Set([releaseA.commit]));

    for (const device of wave2) await report(device, { running: releaseB });
    await settle();
    expect((await latestRollout())?.rollout_wave.map((w) => w.state)).toEqual(["passed", "passed", "active"]);
    expect(new Set(await targets(wave3))).toEqual(new Set([releaseB.commit]));

    for (const device of wave3) await report(device, { running: releaseB });
    await settle();
    rollout = await latestRollout();
    expect(rollout).toMatchObject({ status: "completed" });
    expect(new Set(await targets(devices))).toEqual(new Set([releaseB.commit]));
    expect(await targetOf(pinned)).toBe(releaseA.commit);
  });
});

describe("a bad release", () => {
  let releaseC: Release;

  it("halts with the reason, rolls the canaries back, and never reaches another wave", async () => {
    everTargeted.clear();
    // A webhook for rollout.halted (its address is refused at delivery; the queue is what counts here).
    await t.db.query(
      `INSERT INTO "webhook" (organization, url, secret, events)
       SELECT organization, 'http://10.0.0.1/hook', 'x', '{rollout.halted}' FROM "application" WHERE id = $1`,
      [fleet.id],
    );
    releaseC = await draftRelease(fleet);
    await finalize(releaseC);
    const rollout = await latestRollout();
    if (!rollout) throw new Error("no rollout");
    const others = devices.filter((d) => !canaries.includes(d));
    expect(await targets(canaries)).toEqual(canaries.map(() => releaseC.commit));
    // One canary crash-loops on C, one fails to install it (still on B), one is fine.
    await report(canaries[0] as TestDevice, { running: releaseC, service: "Restarting" });
    await report(canaries[1] as TestDevice, {
      running: releaseB,
      on: releaseC,
      service: "Downloading",
      update: "aborted",
    });
    await report(canaries[2] as TestDevice, { running: releaseC });
    await targets(others);
    await settle();
    const halted = await latestRollout();
    expect(halted).toMatchObject({ status: "halted" });
    // The halt share is 0: the first failing canary's report halts the wave, alone when it is
    // written (within 500 ms, the fleet rolling out) before the second one arrives.
    expect(halted?.reason).toMatch(/^wave 1 failed: [12] of 3 devices failed/);
    expect(halted?.rollout_wave.map((w) => w.state)).toEqual(["rolled_back", "pending", "pending"]);
    expect(halted?.rollout_device.find((rd) => rd.device.__id === canaries[0]?.id)?.health).toBe("failed");
    const { rows: events } = await t.db.query<{ payload: { fleet: number; data: { reason: string; wave: number } } }>(
      `SELECT payload FROM "webhook_delivery" WHERE event = 'rollout.halted'`,
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({ fleet: fleet.id, data: { wave: 1, rolled_back: true } });
    expect(events[0]?.payload.data.reason).toContain("wave 1 failed");
    await t.db.query(`DELETE FROM "webhook" WHERE events = '{rollout.halted}'`);
    expect(await targets(canaries)).toEqual(canaries.map(() => releaseB.commit));
    await targets([...others, pinned]);
    for (const device of [...others, pinned]) expect(everTargeted.get(device.id)?.has(releaseC.commit)).toBe(false);
  });

  it("lets an observer read it but not steer it, and hides it from another organization", async () => {
    const rollout = await latestRollout(observer.token);
    expect(rollout?.status).toBe("halted");
    if (!rollout) throw new Error("no rollout");
    expect((await control(rollout.id, "resume", observer.token)).status).toBe(403);
    expect(await latestRollout(stranger.token)).toBeUndefined();
    expect((await control(rollout.id, "abort", stranger.token)).status).toBe(404);
    expect((await call(t, "GET", `/rollout/v1/${rollout.id}`, stranger.token)).status).toBe(404);
    expect((await control(rollout.id, "explode")).status).toBe(404);
    expect((await control(rollout.id, "pause")).status).toBe(409);
    expect((await call(t, "POST", "/rollout/v1/abc/pause", owner.token)).status).toBe(400);
    // The data API does not change a rollout: the server runs it, controls steer it.
    const patched = await call(t, "PATCH", `/v7/rollout(${rollout.id})`, owner.token, { status: "completed" });
    expect(patched.status).toBe(400);
    expect((await call(t, "DELETE", `/v7/rollout(${rollout.id})`, owner.token)).status).toBeGreaterThanOrEqual(400);
    expect((await latestRollout())?.status).toBe("halted");
    // Nor can a release a rollout uses be deleted.
    expect((await call(t, "DELETE", `/v7/release(${releaseB.id})`, owner.token)).status).toBe(409);
  });

  it("resumes, pauses, and aborts back to the previous release", async () => {
    const rollout = await latestRollout();
    if (!rollout) throw new Error("no rollout");
    // Rolled back, the canaries run B again.
    for (const canary of canaries) await report(canary, { running: releaseB });
    await settle();
    // Skipping the soak of a halted rollout counts when its wave starts again (docs/rollouts.md).
    expect((await control(rollout.id, "skip-soak")).status).toBe(200);
    expect((await control(rollout.id, "resume")).status).toBe(200);
    expect(await targets(canaries)).toEqual(canaries.map(() => releaseC.commit));
    expect((await control(rollout.id, "pause")).status).toBe(200);
    // Healthy canaries while paused: nothing moves.
    for (const canary of canaries) await report(canary, { running: releaseC });
    await settle();
    expect(await latestRollout()).toMatchObject({ status: "paused", current_wave: 0 });
    expect((await control(rollout.id, "resume")).status).toBe(200);
    await settle();
    const advanced = await latestRollout();
    expect(advanced).toMatchObject({ status: "running", current_wave: 1 });
    if (!advanced) throw new Error("no rollout");
    const wave2 = waveOf(advanced, 1);
    expect(new Set(await targets(wave2))).toEqual(new Set([releaseC.commit]));
    // The dashboard reads each device's own target (should_be_running__release), as the device does.
    const listed = await call(
      t,
      "GET",
      `/v7/device?$filter=belongs_to__application eq ${fleet.id}&$select=uuid&$expand=should_be_running__release($select=commit)`,
      owner.token,
    );
    const byUuid = new Map(
      (listed.json as { d: { uuid: string; should_be_running__release: { commit: string }[] }[] }).d.map((row) => [
        row.uuid,
        row.should_be_running__release[0]?.commit,
      ]),
    );
    for (const device of devices) expect(byUuid.get(device.uuid)).toBe(await targetOf(device));
    const aborted = await control(rollout.id, "abort");
    expect(aborted.status).toBe(200);
    expect(aborted.json).toMatchObject({ status: "aborted" });
    expect(new Set(await targets(devices))).toEqual(new Set([releaseB.commit]));
    expect(await targetOf(pinned)).toBe(releaseA.commit);
    expect((await control(rollout.id, "resume")).status).toBe(409);
    // Every control is in the audit log, by whom, with the releases.
    const { rows } = await t.db.query<{ action: string; actor_user: number; details: Record<string, unknown> }>(
      `SELECT action, actor_user, details FROM "audit_event" WHERE target_type = 'rollout' AND target_id = $1 ORDER BY id`,
      [String(rollout.id)],
    );
    expect(rows.map((row) => row.action)).toEqual([
      "rollout.soak_skipped",
      "rollout.resumed",
      "rollout.paused",
      "rollout.resumed",
      "rollout.aborted",
    ]);
    expect(rows[0]).toMatchObject({ actor_user: owner.user.id, details: { fleet: fleet.id } });
  });
});

describe("soak and promotion", () => {
  it("waits out the soak unless skipped, and promotes to every device", async () => {
    const policy = { ...POLICY, waves: POLICY.waves.map((wave) => ({ ...wave, soak_seconds: 3600 })) };
    const updated = await call(t, "PATCH", `/v7/release_policy(application=${fleet.id})`, owner.token, { policy });
    expect(updated.status).toBe(200);
    const audited = await t.db.query<{ target_id: string }>(
      `SELECT target_id FROM "audit_event" WHERE action = 'release_policy.updated' ORDER BY id DESC LIMIT 1`,
    );
    expect(audited.rows[0]?.target_id).toBe(String(fleet.id));
    const releaseD = await draftRelease(fleet);
    await finalize(releaseD);
    const rollout = await latestRollout();
    if (!rollout) throw new Error("no rollout");
    // The previous rollout was aborted: the waiting devices still run B, not the aborted C.
    expect(new Set(await targets(devices.slice(3)))).toEqual(new Set([releaseB.commit]));
    for (const canary of canaries) await report(canary, { running: releaseD });
    await settle();
    expect(await latestRollout()).toMatchObject({ status: "running", current_wave: 0 });
    const skipped = await control(rollout.id, "skip-soak");
    expect(skipped.status).toBe(200);
    expect(skipped.json).toMatchObject({ current_wave: 1 });
    const promoted = await control(rollout.id, "promote");
    expect(promoted.json).toMatchObject({ status: "completed" });
    expect(new Set(await targets(devices))).toEqual(new Set([releaseD.commit]));
    expect(await targetOf(pinned)).toBe(releaseA.commit);
  });

  it("halts a wave that stays unhealthy past its timeout", async () => {
    const policy = {
      ...POLICY,
      waves: POLICY.waves.map((wave) => ({ ...wave, soak_seconds: 0, timeout_seconds: 900 })),
    };
    expect(
      (await call(t, "PATCH", `/v7/release_policy(application=${fleet.id})`, owner.token, { policy })).status,
    ).toBe(200);
    const release = await draftRelease(fleet);
    await finalize(release);
    const rollout = await latestRollout();
    if (!rollout) throw new Error("no rollout");
    // The canaries never report the new release; a quarter of an hour passes.
    await settle();
    expect(await latestRollout()).toMatchObject({ status: "running", current_wave: 0 });
    await t.db.query(
      `UPDATE "rollout_wave" SET started_at = started_at - interval '15 minutes' WHERE rollout = $1 AND wave_index = 0`,
      [rollout.id],
    );
    await settle();
    const halted = await latestRollout();
    expect(halted).toMatchObject({ status: "halted" });
    expect(halted?.reason).toBe(
      `wave 1 failed: timed out after 15 min with 0 of ${canaries.length} devices healthy, 100 % needed; its devices went back to the previous release`,
    );
    await control(rollout.id, "promote");
  });

  it("writes a rolling-out fleet's reports at once: the next wave starts within a second of the gate", async () => {
    const release = await draftRelease(fleet);
    await finalize(release);
    const rollout = await latestRollout();
    if (!rollout) throw new Error("no rollout");
    // The tick tells the state reports which fleets are rolling out.
    await t.ctx.rollouts.tick();
    for (const canary of canaries) await report(canary, { running: release });
    // No flush here: the periodic one comes only every 5 s.
    const started = Date.now();
    while ((await latestRollout())?.current_wave !== 1 && Date.now() - started < 1500) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await latestRollout()).toMatchObject({ status: "running", current_wave: 1 });
    await control(rollout.id, "promote");
  });

  it("gives a device added mid-rollout the previous release until the rollout completes", async () => {
    const releaseE = await draftRelease(fleet);
    await finalize(releaseE);
    const rollout = await latestRollout();
    if (!rollout) throw new Error("no rollout");
    const key = await provisioningKeyFor(t, owner.token, fleet.id);
    const newcomer = await registerDevice(t, key, fleet);
    expect(await targetOf(newcomer)).not.toBe(releaseE.commit);
    await control(rollout.id, "promote");
    expect(await targetOf(newcomer)).toBe(releaseE.commit);
  });
});

describe("pins and tracking", () => {
  const patchFleet = (body: Record<string, unknown>) =>
    call(t, "PATCH", `/v7/application(${fleet.id})`, owner.token, body);

  it("starts a rollout on track-latest, and a user's pin of the fleet ends it", async () => {
    const releaseF = await draftRelease(fleet);
    await finalize(releaseF);
    const first = await latestRollout();
    if (!first) throw new Error("no rollout");
    // A user's pin reaches every device at once (a pin is no rollout), and ends the rollout to F.
    const [previous] = await t.db
      .query<{ id: number }>(`SELECT from__release AS id FROM "rollout" WHERE id = $1`, [first.id])
      .then((r) => r.rows);
    expect(
      (await patchFleet({ should_be_running__release: previous?.id, should_track_latest_release: false })).status,
    ).toBe(200);
    expect(await latestRollout()).toMatchObject({
      id: first.id,
      status: "aborted",
      reason: "the fleet was pinned to another release",
    });
    const pinnedCommit = await targetOf(devices[5] as TestDevice);
    expect(new Set(await targets(devices))).toEqual(new Set([pinnedCommit]));

    // Tracking the latest again, as balena-sdk's trackLatestRelease asks: a rollout to F.
    expect(
      (await patchFleet({ should_track_latest_release: true, should_be_running__release: releaseF.id })).status,
    ).toBe(200);
    const second = await latestRollout();
    expect(second).toMatchObject({ status: "running", to__release: { __id: releaseF.id } });
    expect(await targets(canaries)).toEqual(canaries.map(() => releaseF.commit));
    expect(new Set(await targets(devices.slice(3)))).toEqual(new Set([pinnedCommit]));

    // Pinning the fleet to F itself: every device gets it now.
    expect(
      (await patchFleet({ should_be_running__release: releaseF.id, should_track_latest_release: false })).status,
    ).toBe(200);
    expect(await latestRollout()).toMatchObject({ id: second?.id, status: "completed" });
    expect(new Set(await targets(devices))).toEqual(new Set([releaseF.commit]));
    expect(await targetOf(pinned)).toBe(releaseA.commit);

    // A release finalized while the fleet is pinned moves nothing; tracking again rolls it out.
    const releaseH = await draftRelease(fleet);
    await finalize(releaseH);
    expect(await latestRollout()).toMatchObject({ id: second?.id });
    expect((await patchFleet({ should_track_latest_release: true })).status).toBe(200);
    const third = await latestRollout();
    expect(third).toMatchObject({ status: "running", to__release: { __id: releaseH.id } });
    if (!third) throw new Error("no rollout");
    // Aborted, it holds every device on F; a user's pin to H then reaches them all.
    expect((await control(third.id, "abort")).status).toBe(200);
    expect(new Set(await targets(devices))).toEqual(new Set([releaseF.commit]));
    expect(
      (await patchFleet({ should_be_running__release: releaseH.id, should_track_latest_release: false })).status,
    ).toBe(200);
    expect(new Set(await targets(devices))).toEqual(new Set([releaseH.commit]));
    expect(await latestRollout()).toMatchObject({ id: third.id, status: "aborted" });
  });
});
