import { assignWaves } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import type { RolloutDeviceRow } from "./data.ts";
import {
  allowedControls,
  deviceState,
  policyForm,
  rolloutProgress,
  soakLeft,
  stateCounts,
  validatePolicy,
} from "./model.ts";

describe("release policy form", () => {
  it("suggests canary, 25 % and the rest when the fleet has no policy, valid as it is", () => {
    const form = policyForm(null);
    const result = validatePolicy(form);
    if (!("policy" in result)) throw new Error(result.problem);
    expect(result.policy.waves.map((wave) => [wave.name, wave.selector.type, wave.size])).toEqual([
      ["canary", "tag", undefined],
      ["quarter", "share", { percent: 25 }],
      ["rest", "share", undefined],
    ]);
    expect(result.policy.waves[2]).toMatchObject({ healthy_share: 0.9, halt_failure_ratio: 0.1 });
  });

  it("round-trips a stored policy, shares shown in percent", () => {
    const stored = validatePolicy(policyForm(null));
    if (!("policy" in stored)) throw new Error("invalid");
    const form = policyForm({ is_enabled: false, policy: stored.policy });
    expect(form.enabled).toBe(false);
    expect(form.waves[2]?.healthyPercent).toBe("90");
    expect(validatePolicy(form)).toEqual(stored);
  });

  it("names the wave and the field of a problem in people's words", () => {
    const form = policyForm(null);
    const bad = { ...form, waves: form.waves.map((wave, i) => (i === 1 ? { ...wave, haltPercent: "150" } : wave)) };
    expect(validatePolicy(bad)).toEqual({ problem: "Wave 2: the failure ratio must be from 0 to 100 %" });
    const noKey = { ...form, waves: form.waves.map((wave, i) => (i === 0 ? { ...wave, tagKey: " " } : wave)) };
    expect(validatePolicy(noKey)).toEqual({ problem: "Wave 1: a tag selector needs a tag key" });
    expect(validatePolicy({ ...form, waves: [] })).toEqual({ problem: "A release policy needs at least one wave" });
  });

  it("previews as the server assigns: canaries first, a quarter next, the rest last", () => {
    const result = validatePolicy(policyForm(null));
    if (!("policy" in result)) throw new Error("invalid");
    const devices = Array.from({ length: 20 }, (_, i) => ({
      id: i + 1,
      uuid: (i + 1).toString(16).padStart(32, "0"),
      tags: (i < 3 ? { canary: "yes" } : {}) as Record<string, string>,
    }));
    const waves = assignWaves(result.policy, 7, devices);
    const sizes = [0, 1, 2].map((wave) => [...waves.values()].filter((w) => w === wave).length);
    expect(sizes).toEqual([3, 5, 12]);
  });
});

const row = (health: RolloutDeviceRow["health"], status: string | null = null): RolloutDeviceRow => ({
  id: 1,
  wave_index: 0,
  health,
  reason: null,
  device: [{ id: 1, uuid: "a", device_name: "a", status, overall_status: null, is_online: true }],
});

describe("rollout page counts", () => {
  it("counts a wave's devices per state from their health and update status", () => {
    const active = { state: "active" as const };
    expect(deviceState(row("healthy"), active)).toBe("healthy");
    expect(deviceState(row("failed"), active)).toBe("failed");
    expect(deviceState(row("pending", "Downloading"), active)).toBe("downloading");
    expect(deviceState(row("pending", "Installing"), active)).toBe("installing");
    expect(deviceState(row("pending", "Idle"), active)).toBe("waiting");
    expect(deviceState(row("pending", "Downloading"), { state: "pending" })).toBe("waiting");
    expect(stateCounts([row("healthy"), row("failed"), row("pending", "Starting")], active)).toEqual({
      waiting: 0,
      downloading: 0,
      installing: 1,
      healthy: 1,
      failed: 1,
    });
  });

  it("progress is the healthy share of the rollout's devices; controls follow the status", () => {
    const waves = [
      { device_count: 4, healthy_count: 4, state: "passed", wave_index: 0, is_soak_skipped: false },
      { device_count: 6, healthy_count: 1, state: "active", wave_index: 1, is_soak_skipped: false },
    ] as never;
    expect(rolloutProgress({ status: "running", rollout_wave: waves })).toBe(50);
    expect(rolloutProgress({ status: "completed", rollout_wave: waves })).toBe(100);
    expect(allowedControls({ status: "running", rollout_wave: waves, current_wave: 1 })).toEqual({
      pause: true,
      resume: false,
      "skip-soak": true,
      abort: true,
      promote: true,
    });
    expect(allowedControls({ status: "halted", rollout_wave: waves, current_wave: 1 })).toMatchObject({
      pause: false,
      resume: true,
    });
    expect(allowedControls({ status: "aborted", rollout_wave: waves, current_wave: 1 })).toMatchObject({
      abort: false,
      resume: false,
      promote: false,
    });
  });
});

describe("soak time left", () => {
  const met = "2026-11-25T10:00:00Z";
  const at = (seconds: number) => new Date(met).getTime() + seconds * 1000;
  it("counts down from when the healthy share was met", () => {
    const wave = { state: "active" as const, gate_met_at: met, is_soak_skipped: false };
    expect(soakLeft(wave, 600, at(0))).toBe(600);
    expect(soakLeft(wave, 600, at(599.5))).toBe(1);
    expect(soakLeft(wave, 600, at(700))).toBe(0);
  });
  it("is nothing when the wave is not soaking", () => {
    expect(soakLeft({ state: "active", gate_met_at: null, is_soak_skipped: false }, 600, at(1))).toBeUndefined();
    expect(soakLeft({ state: "active", gate_met_at: met, is_soak_skipped: true }, 600, at(1))).toBeUndefined();
    expect(soakLeft({ state: "passed", gate_met_at: met, is_soak_skipped: false }, 600, at(1))).toBeUndefined();
    expect(soakLeft({ state: "active", gate_met_at: met, is_soak_skipped: false }, 0, at(1))).toBeUndefined();
  });
});
