import { describe, expect, it } from "vitest";
import {
  assignWaves,
  type DeviceHealthFacts,
  deviceHealth,
  durationWords,
  evaluateGate,
  parseReleasePolicy,
  type ReleasePolicy,
  waveBucket,
} from "./rollouts.ts";

const uuid = (n: number) => n.toString(16).padStart(32, "0");
const devices = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  uuid: uuid(i + 1),
  tags: i < 3 ? { canary: "yes" } : ({} as Record<string, string>),
}));

const threeWaves = (): ReleasePolicy => {
  const parsed = parseReleasePolicy({
    waves: [
      { selector: { type: "tag", key: "canary", value: "yes" }, soak_seconds: 60, healthy_share: 1 },
      { selector: { type: "share" }, size: { percent: 25 }, halt_failure_ratio: 0.1 },
      { selector: { type: "share" } },
    ],
  });
  if (!("policy" in parsed)) throw new Error(parsed.problem);
  return parsed.policy;
};

describe("release policy", () => {
  it("fills in the defaults", () => {
    const policy = threeWaves();
    expect(policy.rollback_on_halt).toBe(true);
    expect(policy.waves[1]).toMatchObject({ soak_seconds: 0, healthy_share: 1, halt_failure_ratio: 0.1 });
  });

  it("names the problem of a bad policy", () => {
    expect(parseReleasePolicy({ waves: [] })).toEqual({
      problem: "release policy waves: a release policy needs at least one wave",
    });
    const badShare = parseReleasePolicy({ waves: [{ selector: { type: "share" }, healthy_share: 2 }] });
    expect(badShare).toEqual({ problem: "release policy waves.0.healthy_share: healthy_share must be from 0 to 1" });
    const badSelector = parseReleasePolicy({ waves: [{ selector: { type: "nope" } }] });
    expect("problem" in badSelector && badSelector.problem).toMatch(/selector/);
    const badSize = parseReleasePolicy({ waves: [{ selector: { type: "share" }, size: { percent: 0 } }] });
    expect("problem" in badSize && badSize.problem).toMatch(/size/);
    expect("problem" in parseReleasePolicy({ waves: [{ selector: { type: "share" }, extra: 1 }] })).toBe(true);
    expect("problem" in parseReleasePolicy(null)).toBe(true);
  });
});

describe("wave assignment", () => {
  it("puts the tagged canaries first, a quarter next, the rest last", () => {
    const waves = assignWaves(threeWaves(), 7, devices);
    const ofWave = (i: number) => devices.filter((d) => waves.get(d.id) === i).map((d) => d.id);
    expect(ofWave(0)).toEqual([1, 2, 3]);
    expect(ofWave(1)).toHaveLength(5);
    expect(ofWave(2)).toHaveLength(12);
  });

  it("is stable: the same fleet and devices give the same waves, whatever their order", () => {
    const a = assignWaves(threeWaves(), 7, devices);
    const b = assignWaves(threeWaves(), 7, [...devices].reverse());
    expect([...b].sort()).toEqual([...a].sort());
    expect(waveBucket(7, uuid(5))).toBe(waveBucket(7, uuid(5).toUpperCase()));
    expect(waveBucket(7, uuid(5))).not.toBe(waveBucket(8, uuid(5)));
  });

  it("keeps a device's wave when others join the fleet (share waves pick by bucket)", () => {
    const policy = parseReleasePolicy({
      waves: [{ selector: { type: "share" }, size: { percent: 50 } }, { selector: { type: "share" } }],
    });
    if (!("policy" in policy)) throw new Error();
    const before = assignWaves(policy.policy, 3, devices);
    const buckets = devices.map((d) => waveBucket(3, d.uuid)).sort((x, y) => x - y);
    for (const d of devices) expect(before.get(d.id)).toBe(waveBucket(3, d.uuid) <= (buckets[9] ?? 0) ? 0 : 1);
  });

  it("takes a device list and counts, and leaves nobody out", () => {
    const policy = parseReleasePolicy({
      waves: [
        { selector: { type: "devices", uuids: [uuid(20), uuid(19)] } },
        { selector: { type: "share" }, size: { count: 2 } },
      ],
    });
    if (!("policy" in policy)) throw new Error();
    const waves = assignWaves(policy.policy, 1, devices);
    expect(waves.get(20)).toBe(0);
    expect(waves.get(19)).toBe(0);
    expect([...waves.values()].filter((w) => w === 1)).toHaveLength(18);
  });
});

describe("device health", () => {
  const healthy: DeviceHealthFacts = {
    online: true,
    running_release: 2,
    target_release: 2,
    update_status: null,
    services: { main: "Running", web: "Running" },
    expected_services: ["main", "web"],
  };

  it("is healthy when online on the new release with every service running", () => {
    expect(deviceHealth(healthy)).toEqual({ verdict: "healthy" });
  });

  it("fails on a restart loop, a crashed service or an aborted update", () => {
    expect(deviceHealth({ ...healthy, services: { main: "Restarting", web: "Running" } })).toEqual({
      verdict: "failed",
      reason: "service main is in a restart loop",
    });
    expect(deviceHealth({ ...healthy, services: { main: "exited" } }).verdict).toBe("failed");
    expect(deviceHealth({ ...healthy, running_release: 1, update_status: "aborted", services: {} })).toMatchObject({
      verdict: "failed",
      reason: expect.stringMatching(/aborted/),
    });
  });

  it("is pending while offline, updating or starting", () => {
    expect(deviceHealth({ ...healthy, online: false }).verdict).toBe("pending");
    expect(
      deviceHealth({ ...healthy, running_release: 1, update_status: "downloading", services: { main: "Downloading" } })
        .verdict,
    ).toBe("pending");
    expect(deviceHealth({ ...healthy, services: { main: "Running" } })).toEqual({
      verdict: "pending",
      reason: "service web is not running yet",
    });
  });
});

describe("wave gate", () => {
  const wave = { soak_seconds: 60, healthy_share: 0.8, halt_failure_ratio: 0.1 };

  it("waits for the healthy share, then for the soak", () => {
    expect(evaluateGate(wave, { total: 10, healthy: 7, failed: 0 }, { now: 0, healthSince: null })).toMatchObject({
      verdict: "waiting",
      healthShareMet: false,
    });
    expect(evaluateGate(wave, { total: 10, healthy: 8, failed: 0 }, { now: 1000, healthSince: null })).toEqual({
      verdict: "waiting",
      healthShareMet: true,
      reason: "soaking, 60 s left",
    });
    expect(evaluateGate(wave, { total: 10, healthy: 8, failed: 0 }, { now: 61_000, healthSince: 1000 })).toEqual({
      verdict: "passed",
    });
    expect(
      evaluateGate(wave, { total: 10, healthy: 8, failed: 0 }, { now: 2000, healthSince: 1000, skipSoak: true }),
    ).toEqual({
      verdict: "passed",
    });
  });

  it("fails above the failure ratio, with the reason", () => {
    expect(evaluateGate(wave, { total: 10, healthy: 9, failed: 1 }, { now: 0, healthSince: null }).verdict).toBe(
      "waiting",
    );
    expect(evaluateGate(wave, { total: 10, healthy: 8, failed: 2 }, { now: 0, healthSince: null })).toEqual({
      verdict: "failed",
      reason: "2 of 10 devices failed (20 %, more than the 10 % allowed)",
    });
  });

  it("fails a wave that stays below its healthy share past its timeout", () => {
    const timed = { ...wave, timeout_seconds: 900 };
    const counts = { total: 10, healthy: 3, failed: 0 };
    expect(evaluateGate(timed, counts, { now: 899_000, healthSince: null, activeSince: 0 }).verdict).toBe("waiting");
    expect(evaluateGate(timed, counts, { now: 900_000, healthSince: null, activeSince: 0 })).toEqual({
      verdict: "failed",
      reason: "timed out after 15 min with 3 of 10 devices healthy, 80 % needed",
    });
    // Healthy enough: the timeout no longer applies, the soak decides.
    expect(
      evaluateGate(timed, { ...counts, healthy: 8 }, { now: 900_000, healthSince: 899_000, activeSince: 0 }).verdict,
    ).toBe("waiting");
    // No timeout (0, the default): it waits for ever.
    expect(evaluateGate(wave, counts, { now: 1e12, healthSince: null, activeSince: 0 }).verdict).toBe("waiting");
  });

  it("says durations in seconds, minutes or hours", () => {
    expect([durationWords(90), durationWords(600), durationWords(9000), durationWords(7200)]).toEqual([
      "90 s",
      "10 min",
      "2 h 30 min",
      "2 h",
    ]);
  });

  it("passes an empty wave", () => {
    expect(evaluateGate(wave, { total: 0, healthy: 0, failed: 0 }, { now: 0, healthSince: null })).toEqual({
      verdict: "passed",
    });
  });
});
