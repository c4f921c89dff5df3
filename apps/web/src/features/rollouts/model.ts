import { parseReleasePolicy, type ReleasePolicy, type WavePolicy } from "@flotilla/domain";
import { versionText } from "../releases/model.ts";
import type { RolloutDeviceRow, RolloutRow, RolloutWaveRow } from "./data.ts";

/** A release as rollouts name it: its version (a draft's without balena's creation time), else its short commit. */
export const releaseName = (release: RolloutRow["to__release"][number] | undefined) =>
  release ? versionText(release) || release.commit.slice(0, 7) : "—";

/** The release policy editor's form and the rollout page's counts (docs/rollouts.md). Pure. */

export type SelectorKind = "tag" | "devices" | "share";
export type SizeKind = "all" | "count" | "percent";

/** One wave as the editor holds it: texts as typed, shares in percent. */
export interface WaveForm {
  name: string;
  selector: SelectorKind;
  tagKey: string;
  tagValue: string;
  /** Device uuids, one per line or separated by commas or spaces. */
  uuids: string;
  sizeKind: SizeKind;
  size: string;
  soakSeconds: string;
  /** Seconds a wave may stay below its healthy share before it fails; "0": no limit. */
  timeoutSeconds: string;
  healthyPercent: string;
  haltPercent: string;
}

export interface PolicyForm {
  enabled: boolean;
  waves: WaveForm[];
  rollbackOnHalt: boolean;
}

export const NEW_WAVE: WaveForm = {
  name: "",
  selector: "share",
  tagKey: "",
  tagValue: "",
  uuids: "",
  sizeKind: "all",
  size: "",
  soakSeconds: "0",
  timeoutSeconds: "0",
  healthyPercent: "100",
  haltPercent: "0",
};

/** A starting point: canary devices (tag canary=yes), then 25 %, then the rest. */
export const SUGGESTED_WAVES: WaveForm[] = [
  { ...NEW_WAVE, name: "canary", selector: "tag", tagKey: "canary", tagValue: "yes", soakSeconds: "600" },
  { ...NEW_WAVE, name: "quarter", sizeKind: "percent", size: "25", soakSeconds: "600", haltPercent: "10" },
  { ...NEW_WAVE, name: "rest", healthyPercent: "90", haltPercent: "10" },
];

const percentText = (share: number) => String(Math.round(share * 10_000) / 100);

function waveForm(wave: WavePolicy): WaveForm {
  return {
    name: wave.name ?? "",
    selector: wave.selector.type,
    tagKey: wave.selector.type === "tag" ? wave.selector.key : "",
    tagValue: wave.selector.type === "tag" ? (wave.selector.value ?? "") : "",
    uuids: wave.selector.type === "devices" ? wave.selector.uuids.join("\n") : "",
    sizeKind: wave.size === undefined ? "all" : "count" in wave.size ? "count" : "percent",
    size: wave.size === undefined ? "" : String("count" in wave.size ? wave.size.count : wave.size.percent),
    soakSeconds: String(wave.soak_seconds),
    timeoutSeconds: String(wave.timeout_seconds),
    healthyPercent: percentText(wave.healthy_share),
    haltPercent: percentText(wave.halt_failure_ratio),
  };
}

/** The form for a stored policy, or the suggested one when the fleet has none. */
export function policyForm(row: { is_enabled: boolean; policy: ReleasePolicy } | null | undefined): PolicyForm {
  if (!row) return { enabled: true, waves: SUGGESTED_WAVES.map((wave) => ({ ...wave })), rollbackOnHalt: true };
  return {
    enabled: row.is_enabled,
    waves: row.policy.waves.map(waveForm),
    rollbackOnHalt: row.policy.rollback_on_halt,
  };
}

/** A typed number, NaN for nothing or words (the domain's validation names the field). */
const numberOf = (text: string) => (text.trim() === "" ? Number.NaN : Number(text.trim()));

/** The policy as the API takes it, before validation. */
export function policyInput(form: PolicyForm): unknown {
  return {
    waves: form.waves.map((wave) => ({
      ...(wave.name.trim() ? { name: wave.name.trim() } : {}),
      selector:
        wave.selector === "tag"
          ? { type: "tag", key: wave.tagKey.trim(), ...(wave.tagValue !== "" ? { value: wave.tagValue } : {}) }
          : wave.selector === "devices"
            ? { type: "devices", uuids: wave.uuids.split(/[\s,]+/).filter((uuid) => uuid !== "") }
            : { type: "share" },
      ...(wave.sizeKind === "count" ? { size: { count: numberOf(wave.size) } } : {}),
      ...(wave.sizeKind === "percent" ? { size: { percent: numberOf(wave.size) } } : {}),
      soak_seconds: numberOf(wave.soakSeconds),
      timeout_seconds: numberOf(wave.timeoutSeconds),
      healthy_share: numberOf(wave.healthyPercent) / 100,
      halt_failure_ratio: numberOf(wave.haltPercent) / 100,
    })),
    rollback_on_halt: form.rollbackOnHalt,
  };
}

/**
 * The policy the form describes, or the domain's problem (`release policy waves.0.soak_seconds:
 * …`) with the wave's number in words for people: `Wave 1: …`.
 */
export function validatePolicy(form: PolicyForm): { policy: ReleasePolicy } | { problem: string } {
  const result = parseReleasePolicy(policyInput(form));
  if ("policy" in result) return result;
  const problem = result.problem
    .replace(/^release policy waves\.(\d+)\.[a-z_.0-9]*: /, (_, index: string) => `Wave ${Number(index) + 1}: `)
    .replace(/^release policy (waves: )?/, "")
    .replace(/healthy_share/g, "the healthy share")
    .replace(/halt_failure_ratio/g, "the failure ratio")
    .replace(/soak_seconds/g, "the soak time")
    .replace(/timeout_seconds/g, "the timeout")
    .replace(/must be from 0 to 1/g, "must be from 0 to 100 %")
    .replace(/must be a number from 0 to 1/g, "must be a number from 0 to 100 %");
  return { problem: problem.charAt(0).toUpperCase() + problem.slice(1) };
}

/** The states a wave's devices are counted in on the rollout page. */
export const DEVICE_STATES = ["waiting", "downloading", "installing", "healthy", "failed"] as const;
export type DeviceState = (typeof DEVICE_STATES)[number];

/** Where a device of a wave stands: its health as last judged, and for pending ones its update status. */
export function deviceState(row: RolloutDeviceRow, wave: Pick<RolloutWaveRow, "state"> | undefined): DeviceState {
  if (row.health === "healthy") return "healthy";
  if (row.health === "failed") return "failed";
  if (!wave || wave.state === "pending" || wave.state === "rolled_back") return "waiting";
  const device = row.device[0];
  const status = `${device?.status ?? ""} ${device?.overall_status ?? ""}`.toLowerCase();
  if (status.includes("download")) return "downloading";
  if (status.includes("install") || status.includes("starting") || status.includes("updating")) return "installing";
  return "waiting";
}

export function stateCounts(rows: readonly RolloutDeviceRow[], wave: Pick<RolloutWaveRow, "state"> | undefined) {
  const counts: Record<DeviceState, number> = { waiting: 0, downloading: 0, installing: 0, healthy: 0, failed: 0 };
  for (const row of rows) counts[deviceState(row, wave)] += 1;
  return counts;
}

/** The share of the rollout's devices on the new release and healthy, 0–100, for progress bars. */
export function rolloutProgress(rollout: Pick<RolloutRow, "status" | "rollout_wave">): number {
  if (rollout.status === "completed") return 100;
  const total = rollout.rollout_wave.reduce((sum, wave) => sum + wave.device_count, 0);
  if (total === 0) return 0;
  const healthy = rollout.rollout_wave.reduce((sum, wave) => sum + wave.healthy_count, 0);
  return Math.round((healthy / total) * 100);
}

/**
 * Seconds of soak the current wave has left (its healthy share met, the soak running), or
 * undefined when it is not soaking.
 */
export function soakLeft(
  wave: Pick<RolloutWaveRow, "state" | "gate_met_at" | "is_soak_skipped">,
  soakSeconds: number,
  now: number,
): number | undefined {
  if (wave.state !== "active" || !wave.gate_met_at || wave.is_soak_skipped || soakSeconds <= 0) return undefined;
  const left = Math.ceil(soakSeconds - (now - new Date(wave.gate_met_at).getTime()) / 1000);
  return Math.max(0, left);
}

/** Whether the rollout may still be steered (running, paused or halted). */
export const isOpen = (status: string) => status === "running" || status === "paused" || status === "halted";

/** Which controls a rollout's status allows (docs/rollouts.md "Controls"). */
export function allowedControls(rollout: Pick<RolloutRow, "status" | "rollout_wave" | "current_wave">) {
  const open = isOpen(rollout.status);
  const current = rollout.rollout_wave.find((wave) => wave.wave_index === rollout.current_wave);
  return {
    pause: rollout.status === "running",
    resume: rollout.status === "paused" || rollout.status === "halted",
    "skip-soak": open && current?.state === "active" && !current.is_soak_skipped,
    abort: open,
    promote: open,
  };
}
