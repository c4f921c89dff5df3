import { sql } from "drizzle-orm";
import { boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, date, id, modifiedAt, optional, ownedBy } from "./columns.ts";
import { device } from "./devices.ts";
import { application } from "./fleets.ts";
import { release } from "./releases.ts";

/**
 * Phased rollouts (docs/rollouts.md). A fleet without a release policy (or with a disabled one)
 * moves all its devices to a new release at once, as before.
 */
export const release_policy = pgTable("release_policy", {
  id: id(),
  created_at: createdAt(),
  modified_at: modifiedAt(),
  application: ownedBy(() => application.id).unique(),
  is_enabled: boolean().notNull().default(true),
  /** packages/domain ReleasePolicy, checked on every write. */
  policy: jsonb().notNull(),
});

/**
 * One release reaching a fleet wave by wave. While it is in effect, not completed, and the fleet
 * still runs its `to__release`, a device's target is the new release only if its wave has
 * started (and was not rolled back); otherwise `from__release`.
 */
export const rollout = pgTable(
  "rollout",
  {
    id: id(),
    created_at: createdAt(),
    modified_at: modifiedAt(),
    belongs_to__application: ownedBy(() => application.id),
    from__release: optional(() => release.id),
    to__release: ownedBy(() => release.id),
    status: text().notNull().default("running"),
    reason: text(),
    current_wave: integer().notNull().default(0),
    wave_count: integer().notNull(),
    /** The policy as it was when the rollout started: later edits apply to the next one. */
    policy: jsonb().notNull(),
    ended_at: date(),
    /**
     * Whether it still decides its devices' targets (with the fleet on `to__release` and not
     * completed): a newer rollout or a user's pin of the fleet ends that, an abort does not.
     */
    is_in_effect: boolean().notNull().default(true),
  },
  (t) => [
    check("rollout_status_check", sql`${t.status} IN ('running', 'paused', 'halted', 'completed', 'aborted')`),
    // At most one rollout of a fleet is in effect; a new release supersedes it (aborted).
    uniqueIndex("rollout_open_per_fleet_key")
      .on(t.belongs_to__application)
      .where(sql`${t.status} IN ('running', 'paused', 'halted')`),
    index("rollout_in_effect_idx").on(t.belongs_to__application).where(sql`${t.is_in_effect}`),
  ],
);

export const rollout_wave = pgTable(
  "rollout_wave",
  {
    id: id(),
    created_at: createdAt(),
    rollout: ownedBy(() => rollout.id),
    wave_index: integer().notNull(),
    name: text(),
    state: text().notNull().default("pending"),
    reason: text(),
    started_at: date(),
    /** When the healthy share was first met (the soak counts from it); null while it is not. */
    gate_met_at: date(),
    ended_at: date(),
    is_soak_skipped: boolean().notNull().default(false),
    device_count: integer().notNull().default(0),
    healthy_count: integer().notNull().default(0),
    failed_count: integer().notNull().default(0),
    pending_count: integer().notNull().default(0),
  },
  (t) => [
    check("rollout_wave_state_check", sql`${t.state} IN ('pending', 'active', 'passed', 'failed', 'rolled_back')`),
    uniqueIndex("rollout_wave_key").on(t.rollout, t.wave_index),
  ],
);

/** Which wave a device of the fleet belongs to, fixed when the rollout starts. */
export const rollout_device = pgTable(
  "rollout_device",
  {
    id: id(),
    rollout: ownedBy(() => rollout.id),
    device: ownedBy(() => device.id),
    wave_index: integer().notNull(),
    /** The last health verdict (healthy, pending, failed) and why, for the rollout page. */
    health: text().notNull().default("pending"),
    reason: text(),
  },
  (t) => [
    uniqueIndex("rollout_device_key").on(t.rollout, t.device),
    index("rollout_device_device_idx").on(t.device),
    index("rollout_device_wave_idx").on(t.rollout, t.wave_index),
  ],
);
