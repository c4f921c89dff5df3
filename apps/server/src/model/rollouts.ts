import { createdAt, editable, field, id, many, modifiedAt, ref, resource } from "./dsl.ts";

/**
 * Phased rollouts (docs/rollouts.md), Flotilla's own resources (balena has none): a fleet's
 * release policy, written by those who may pin the fleet's release; rollouts, their waves and
 * device assignments, read-only here (the server runs them; controls are /rollout/v1 actions).
 */
export const rolloutResources = [
  resource({
    name: "release_policy",
    table: "release_policy",
    alternateKeys: [["application"]],
    fields: [
      id,
      createdAt,
      modifiedAt,
      ref("application", "application", { writable: true, required: true }),
      editable("is_enabled", "Boolean"),
      editable("policy", "JSON", true),
    ],
  }),
  resource({
    name: "rollout",
    table: "rollout",
    fields: [
      id,
      createdAt,
      modifiedAt,
      ref("belongs_to__application", "application"),
      ref("from__release", "release"),
      ref("to__release", "release"),
      field("status", "Text"),
      field("reason", "Text"),
      field("current_wave", "Integer"),
      field("wave_count", "Integer"),
      field("policy", "JSON"),
      field("ended_at", "Date Time"),
      field("is_in_effect", "Boolean"),
    ],
    navigations: [
      ...many(["rollout_wave"], "rollout_wave", "rollout"),
      ...many(["rollout_device"], "rollout_device", "rollout"),
    ],
  }),
  resource({
    name: "rollout_wave",
    table: "rollout_wave",
    alternateKeys: [["rollout", "wave_index"]],
    fields: [
      id,
      createdAt,
      ref("rollout", "rollout"),
      field("wave_index", "Integer"),
      field("name", "Text"),
      field("state", "Text"),
      field("reason", "Text"),
      field("started_at", "Date Time"),
      field("gate_met_at", "Date Time"),
      field("ended_at", "Date Time"),
      field("is_soak_skipped", "Boolean"),
      field("device_count", "Integer"),
      field("healthy_count", "Integer"),
      field("failed_count", "Integer"),
      field("pending_count", "Integer"),
    ],
  }),
  resource({
    name: "rollout_device",
    table: "rollout_device",
    alternateKeys: [["rollout", "device"]],
    fields: [
      id,
      ref("rollout", "rollout"),
      ref("device", "device"),
      field("wave_index", "Integer"),
      field("health", "Text"),
      field("reason", "Text"),
    ],
  }),
];
