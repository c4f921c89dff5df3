import { z } from "zod";

/**
 * Phased rollouts (issue #23, docs/rollouts.md): a fleet's release policy, the stable assignment
 * of its devices to waves, a device's health verdict for a release, and a wave's gate. Pure rules,
 * shared by the server (which runs rollouts) and the dashboard (which edits policies and previews
 * the waves).
 */

export const ROLLOUT_STATUSES = ["running", "paused", "halted", "completed", "aborted"] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

/** pending: not started; active: its devices target the new release; rolled_back: they went back. */
export const WAVE_STATES = ["pending", "active", "passed", "failed", "rolled_back"] as const;
export type WaveState = (typeof WAVE_STATES)[number];

/** Wave states whose devices target the rollout's new release. */
export const WAVE_STATES_ON_NEW_RELEASE: readonly WaveState[] = ["active", "passed", "failed"];

export const MAX_WAVES = 10;
export const MAX_WAVE_DEVICE_UUIDS = 1000;
/** A week: a longer soak is a forgotten rollout. */
export const MAX_SOAK_SECONDS = 7 * 24 * 3600;

const share = (what: string) =>
  z
    .number({ error: `${what} must be a number from 0 to 1` })
    .min(0, `${what} must be from 0 to 1`)
    .max(1, `${what} must be from 0 to 1`);

const selector = z.discriminatedUnion(
  "type",
  [
    z
      .object({
        type: z.literal("tag"),
        key: z.string().trim().min(1, "a tag selector needs a tag key").max(100),
        value: z.string().max(1000).optional(),
      })
      .strict(),
    z
      .object({
        type: z.literal("devices"),
        uuids: z
          .array(z.string().regex(/^[0-9a-f]{7,62}$/i, "device uuids are 7 to 62 hex digits"))
          .min(1, "a device list needs at least one uuid")
          .max(MAX_WAVE_DEVICE_UUIDS, `a device list holds at most ${MAX_WAVE_DEVICE_UUIDS} uuids`),
      })
      .strict(),
    z.object({ type: z.literal("share") }).strict(),
  ],
  { error: 'selector type must be "tag", "devices" or "share"' },
);

const size = z.union(
  [
    z.object({ count: z.number().int("count must be a whole number").min(1, "count must be 1 or more") }).strict(),
    z
      .object({
        percent: z.number().gt(0, "percent must be more than 0").max(100, "percent must be at most 100"),
      })
      .strict(),
  ],
  { error: "size is {count: n} or {percent: p}" },
);

const wave = z
  .object({
    name: z.string().trim().max(100).optional(),
    selector,
    size: size.optional(),
    soak_seconds: z
      .number()
      .int("soak_seconds must be a whole number")
      .min(0, "soak_seconds must be 0 or more")
      .max(MAX_SOAK_SECONDS, `soak_seconds must be at most ${MAX_SOAK_SECONDS}`)
      .default(0),
    timeout_seconds: z
      .number()
      .int("timeout_seconds must be a whole number")
      .min(0, "timeout_seconds must be 0 or more")
      .max(MAX_SOAK_SECONDS, `timeout_seconds must be at most ${MAX_SOAK_SECONDS}`)
      .default(0),
    healthy_share: share("healthy_share").default(1),
    halt_failure_ratio: share("halt_failure_ratio").default(0),
  })
  .strict();

export const releasePolicySchema = z
  .object({
    waves: z
      .array(wave)
      .min(1, "a release policy needs at least one wave")
      .max(MAX_WAVES, `a release policy has at most ${MAX_WAVES} waves`),
    rollback_on_halt: z.boolean().default(true),
  })
  .strict();

export type ReleasePolicy = z.output<typeof releasePolicySchema>;
export type WavePolicy = ReleasePolicy["waves"][number];
export type WaveSelector = WavePolicy["selector"];

/** The policy, with defaults filled in, or the first problem in words naming the field. */
export function parseReleasePolicy(input: unknown): { policy: ReleasePolicy } | { problem: string } {
  const result = releasePolicySchema.safeParse(input);
  if (result.success) return { policy: result.data };
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  return { problem: `release policy ${where}${issue?.message ?? "is not valid"}` };
}

/**
 * A device's place in its fleet, from 0 (first) to 1: FNV-1a of fleet and uuid. It depends on
 * nothing else, so the same devices are the first 10 % of every rollout of the fleet.
 */
export function waveBucket(fleet: number, uuid: string): number {
  let hash = 0x811c9dc5;
  const text = `${fleet}:${uuid.toLowerCase()}`;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 0x1_0000_0000;
}

export type WaveCandidate = { id: number; uuid: string; tags: Readonly<Record<string, string>> };

function selects(selector: WaveSelector, device: WaveCandidate): boolean {
  if (selector.type === "share") return true;
  if (selector.type === "devices")
    return selector.uuids.some((uuid) => uuid.toLowerCase() === device.uuid.toLowerCase());
  const value = device.tags[selector.key];
  return value !== undefined && (selector.value === undefined || selector.value === value);
}

/**
 * Each device's wave index. Waves pick in order from the devices no earlier wave took: those
 * their selector matches, in bucket order, up to their size (a percentage is of all the
 * candidates, rounded up). Devices no wave picked join the last wave, so a rollout that
 * completes has reached every device.
 */
export function assignWaves(
  policy: ReleasePolicy,
  fleet: number,
  devices: readonly WaveCandidate[],
): Map<number, number> {
  const ordered = [...devices]
    .map((device) => ({ device, bucket: waveBucket(fleet, device.uuid) }))
    .sort((a, b) => a.bucket - b.bucket || a.device.uuid.localeCompare(b.device.uuid))
    .map((entry) => entry.device);
  const assigned = new Map<number, number>();
  policy.waves.forEach((wave, index) => {
    const limit =
      wave.size === undefined
        ? Number.POSITIVE_INFINITY
        : "count" in wave.size
          ? wave.size.count
          : Math.ceil((wave.size.percent / 100) * devices.length);
    let taken = 0;
    for (const device of ordered) {
      if (taken >= limit) break;
      if (assigned.has(device.id) || !selects(wave.selector, device)) continue;
      assigned.set(device.id, index);
      taken += 1;
    }
  });
  const last = policy.waves.length - 1;
  for (const device of ordered) if (!assigned.has(device.id)) assigned.set(device.id, last);
  return assigned;
}

/** What a device reported, as the server keeps it, for the release a rollout brings it. */
export type DeviceHealthFacts = {
  online: boolean;
  /** The release it reports running (null: none yet). */
  running_release: number | null;
  target_release: number;
  /** The device's own update status (`aborted`: the download or install failed). */
  update_status: string | null;
  /** The statuses of the target release's services on the device, by service name. */
  services: Readonly<Record<string, string>>;
  /** The target release's service names. */
  expected_services: readonly string[];
};

export type DeviceHealth = { verdict: "healthy" | "pending" | "failed"; reason?: string };

const FAILED_SERVICE_STATUSES = new Set([
  "restarting",
  "dead",
  "exited",
  "download failed",
  "install failed",
  "failed",
]);

/**
 * Healthy: online, running the new release with every service running. Failed: the update
 * was aborted or rejected, or a service of the new release crashes (restart loop, dead, exited)
 * or failed to download or install. Otherwise pending (offline, still downloading or starting).
 */
export function deviceHealth(facts: DeviceHealthFacts): DeviceHealth {
  for (const [service, status] of Object.entries(facts.services)) {
    if (FAILED_SERVICE_STATUSES.has(status.toLowerCase())) {
      const words = status.toLowerCase() === "restarting" ? "is in a restart loop" : `is ${status}`;
      return { verdict: "failed", reason: `service ${service} ${words}` };
    }
  }
  const onNew = facts.running_release === facts.target_release;
  if (!onNew && (facts.update_status === "aborted" || facts.update_status === "rejected")) {
    return { verdict: "failed", reason: `the update was ${facts.update_status} (download or install failed)` };
  }
  if (!facts.online) return { verdict: "pending", reason: "offline" };
  if (!onNew) return { verdict: "pending", reason: "not running the new release yet" };
  const notRunning = facts.expected_services.filter((name) => facts.services[name]?.toLowerCase() !== "running");
  if (notRunning.length > 0) return { verdict: "pending", reason: `service ${notRunning[0]} is not running yet` };
  return { verdict: "healthy" };
}

export type WaveCounts = { total: number; healthy: number; failed: number };

export type GateVerdict =
  | { verdict: "passed" }
  | { verdict: "failed"; reason: string }
  | { verdict: "waiting"; healthShareMet: boolean; reason: string };

const percent = (ratio: number) => `${Math.round(ratio * 1000) / 10} %`;

/** "90 s", "10 min", "2 h 30 min": a duration in the words the rollout's reasons use. */
export function durationWords(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  return minutes % 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes / 60} h`;
}

/**
 * A wave's gate: failed when more than `halt_failure_ratio` of its devices failed, or when
 * `timeout_seconds` (0: none) passed since it started (`activeSince`) without `healthy_share` of
 * them healthy (devices that never report must not hold a rollout forever); passed once
 * `healthy_share` of them are healthy and have stayed so for `soak_seconds` (counted from
 * `healthSince`, when the share was first met; `skipSoak` passes at once); waiting otherwise.
 * An empty wave passes.
 */
export function evaluateGate(
  wave: Pick<WavePolicy, "soak_seconds" | "healthy_share" | "halt_failure_ratio"> & { timeout_seconds?: number },
  counts: WaveCounts,
  options: { now: number; healthSince: number | null; skipSoak?: boolean; activeSince?: number | null },
): GateVerdict {
  if (counts.total === 0) return { verdict: "passed" };
  const failedRatio = counts.failed / counts.total;
  if (counts.failed > 0 && failedRatio > wave.halt_failure_ratio) {
    return {
      verdict: "failed",
      reason: `${counts.failed} of ${counts.total} devices failed (${percent(failedRatio)}, more than the ${percent(wave.halt_failure_ratio)} allowed)`,
    };
  }
  const healthyRatio = counts.healthy / counts.total;
  if (healthyRatio < wave.healthy_share) {
    const health = `${counts.healthy} of ${counts.total} devices healthy, ${percent(wave.healthy_share)} needed`;
    const timeout = wave.timeout_seconds ?? 0;
    if (timeout > 0 && options.activeSince != null && options.now - options.activeSince >= timeout * 1000) {
      return { verdict: "failed", reason: `timed out after ${durationWords(timeout)} with ${health}` };
    }
    return { verdict: "waiting", healthShareMet: false, reason: health };
  }
  const since = options.healthSince ?? options.now;
  const left = wave.soak_seconds * 1000 - (options.now - since);
  if (options.skipSoak || left <= 0) return { verdict: "passed" };
  return { verdict: "waiting", healthShareMet: true, reason: `soaking, ${Math.ceil(left / 1000)} s left` };
}
