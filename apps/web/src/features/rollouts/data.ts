import type { ReleasePolicy, RolloutStatus, WaveState } from "@flotilla/domain";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useServices } from "../../app-services.tsx";
import { accountRequest } from "../auth/api.ts";
import { pineOf } from "../orgs/data.ts";

/** Rollouts and release policies as the dashboard reads them (docs/rollouts.md). */

/** Rollout pages refresh this often while a rollout runs: waves advance on state reports. */
export const ROLLOUT_POLL_MS = 3000;
/** The summaries' progress refreshes more slowly. */
export const ROLLOUT_SUMMARY_POLL_MS = 10_000;

export interface ReleasePolicyRow {
  id: number;
  application: { __id: number } | number;
  is_enabled: boolean;
  policy: ReleasePolicy;
}

export interface RolloutWaveRow {
  id: number;
  wave_index: number;
  name: string | null;
  state: WaveState;
  reason: string | null;
  started_at: string | null;
  gate_met_at: string | null;
  ended_at: string | null;
  is_soak_skipped: boolean;
  device_count: number;
  healthy_count: number;
  failed_count: number;
  pending_count: number;
}

export interface RolloutDeviceRow {
  id: number;
  wave_index: number;
  health: "healthy" | "pending" | "failed";
  reason: string | null;
  device: Array<{
    id: number;
    uuid: string;
    device_name: string;
    status: string | null;
    overall_status: string | null;
    is_online: boolean;
  }>;
}

export interface RolloutRow {
  id: number;
  status: RolloutStatus;
  reason: string | null;
  current_wave: number;
  wave_count: number;
  is_in_effect: boolean;
  created_at: string;
  modified_at: string;
  ended_at: string | null;
  policy: ReleasePolicy;
  from__release: Array<{ id: number; raw_version: string; commit: string; is_invalidated: boolean }>;
  to__release: Array<{ id: number; raw_version: string; commit: string; is_invalidated: boolean }>;
  rollout_wave: RolloutWaveRow[];
}

export interface RolloutDetail extends RolloutRow {
  rollout_device: RolloutDeviceRow[];
}

const RELEASE = { $select: ["id", "raw_version", "commit", "is_invalidated"] } as const;
const ROLLOUT_SELECT = [
  "id",
  "status",
  "reason",
  "current_wave",
  "wave_count",
  "is_in_effect",
  "created_at",
  "modified_at",
  "ended_at",
  "policy",
];
const WAVES = { $orderby: { wave_index: "asc" } } as const;

export function useReleasePolicy(fleetId: number | undefined) {
  const { sdk } = useServices();
  return useQuery({
    queryKey: ["fleet", fleetId, "release-policy"],
    enabled: fleetId !== undefined,
    queryFn: async () => {
      const rows = await pineOf(sdk).get<ReleasePolicyRow[]>({
        resource: "release_policy",
        options: { $filter: { application: fleetId } },
      });
      return rows[0] ?? null;
    },
  });
}

/** Creates or replaces the fleet's policy (one per fleet), or switches it on or off. */
export function useSaveReleasePolicy(fleetId: number) {
  const { sdk } = useServices();
  const queryClient = useQueryClient();
  return useMutation({
    meta: { reportErrors: false },
    mutationFn: async ({ existing, isEnabled, policy }: { existing?: number; isEnabled: boolean; policy: unknown }) => {
      const body = { is_enabled: isEnabled, policy };
      if (existing === undefined) {
        await pineOf(sdk).post({ resource: "release_policy", body: { application: fleetId, ...body } });
      } else {
        await pineOf(sdk).patch({ resource: "release_policy", id: existing, body });
      }
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["fleet", fleetId, "release-policy"] }),
  });
}

/** The fleet's rollouts, newest first (the "Rollouts" page and the summaries). */
export function useFleetRollouts(fleetId: number | undefined, options: { top?: number; poll?: number } = {}) {
  const { sdk } = useServices();
  return useQuery({
    queryKey: ["fleet", fleetId, "rollouts", options.top ?? 50],
    enabled: fleetId !== undefined,
    refetchInterval: options.poll ?? ROLLOUT_POLL_MS,
    queryFn: () =>
      pineOf(sdk).get<RolloutRow[]>({
        resource: "rollout",
        options: {
          $select: ROLLOUT_SELECT,
          $filter: { belongs_to__application: fleetId },
          $orderby: { id: "desc" },
          $top: options.top ?? 50,
          $expand: { from__release: RELEASE, to__release: RELEASE, rollout_wave: WAVES },
        },
      }),
  });
}

/** The rollouts that bring a release (its summary shows the running one). */
export function useReleaseRollouts(releaseId: number | undefined) {
  const { sdk } = useServices();
  return useQuery({
    queryKey: ["release", releaseId, "rollouts"],
    enabled: releaseId !== undefined,
    refetchInterval: ROLLOUT_SUMMARY_POLL_MS,
    queryFn: () =>
      pineOf(sdk).get<RolloutRow[]>({
        resource: "rollout",
        options: {
          $select: ROLLOUT_SELECT,
          $filter: { to__release: releaseId },
          $orderby: { id: "desc" },
          $top: 1,
          $expand: { from__release: RELEASE, to__release: RELEASE, rollout_wave: WAVES },
        },
      }),
  });
}

export function useRollout(rolloutId: number | undefined) {
  const { sdk } = useServices();
  return useQuery({
    queryKey: ["rollout", rolloutId],
    enabled: rolloutId !== undefined,
    refetchInterval: ROLLOUT_POLL_MS,
    queryFn: async () => {
      const rows = await pineOf(sdk).get<RolloutDetail[]>({
        resource: "rollout",
        options: {
          $select: ROLLOUT_SELECT,
          $filter: { id: rolloutId },
          $expand: {
            from__release: RELEASE,
            to__release: RELEASE,
            rollout_wave: WAVES,
            rollout_device: {
              $select: ["id", "wave_index", "health", "reason"],
              $expand: {
                device: { $select: ["id", "uuid", "device_name", "status", "overall_status", "is_online"] },
              },
            },
          },
        },
      });
      return rows[0] ?? null;
    },
  });
}

export const ROLLOUT_CONTROLS = ["pause", "resume", "skip-soak", "abort", "promote"] as const;
export type RolloutControl = (typeof ROLLOUT_CONTROLS)[number];

/** `POST /rollout/v1/{id}/{control}`; refreshes the rollout and the fleet's lists. */
export function useRolloutControl(rolloutId: number, fleetId: number | undefined) {
  const { sdk, config } = useServices();
  const queryClient = useQueryClient();
  return useMutation({
    meta: { reportErrors: false },
    mutationFn: (control: RolloutControl) =>
      accountRequest(sdk, config.apiUrl, { method: "POST", path: `/rollout/v1/${rolloutId}/${control}` }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ["rollout", rolloutId] });
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleetId, "rollouts"] });
    },
  });
}

export type Recovery = "invalidate" | "pin";

/**
 * After a halted or aborted rollout: invalidate its new release (no device or fleet takes it
 * again), or pin the fleet to the previous release (which ends the rollout: every device runs it).
 */
export function useRolloutRecovery(rollout: RolloutRow, fleetId: number) {
  const { sdk } = useServices();
  const queryClient = useQueryClient();
  return useMutation({
    meta: { reportErrors: false },
    mutationFn: async (action: Recovery) => {
      const to = rollout.to__release[0];
      const from = rollout.from__release[0];
      if (action === "invalidate" && to) {
        await pineOf(sdk).patch({ resource: "release", id: to.id, body: { is_invalidated: true } });
      } else if (action === "pin" && from) {
        await pineOf(sdk).patch({
          resource: "application",
          id: fleetId,
          body: { should_be_running__release: from.id },
        });
      }
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ["rollout", rollout.id] });
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleetId] });
      await queryClient.invalidateQueries({ queryKey: ["release"] });
      await queryClient.invalidateQueries({ queryKey: ["device"] });
    },
  });
}
