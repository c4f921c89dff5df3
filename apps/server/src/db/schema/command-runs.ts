import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { api_key, user } from "./accounts.ts";
import { createdAt, date, id, optional, ownedBy } from "./columns.ts";
import { device } from "./devices.ts";
import { application } from "./fleets.ts";
import { organization } from "./organizations.ts";

/**
 * Bulk commands (docs/bulk-commands.md): one command run on many devices. Not part of the /v7
 * model: it is read through /command/v1.
 */
export const command_run = pgTable(
  "command_run",
  {
    id: id(),
    organization: ownedBy(() => organization.id),
    fleet: optional(() => application.id),
    created_by: integer().references(() => user.id, { onDelete: "set null" }),
    api_key: integer().references(() => api_key.id, { onDelete: "set null" }),
    command: text().notNull(),
    /** `host`, or the service's name. */
    target: text().notNull(),
    timeout_s: integer().notNull(),
    concurrency: integer().notNull(),
    /** 0: offline devices are reported offline at once; otherwise they are waited for this long. */
    queue_window_s: integer().notNull().default(0),
    created_at: createdAt(),
    finished_at: date(),
    status: text().notNull().default("running"),
    /** The API instance that schedules it: a restart finds the runs whose instance is gone. */
    instance: text(),
  },
  (t) => [
    check("command_run_status_check", sql`${t.status} IN ('running', 'finished', 'cancelled')`),
    index("command_run_organization_idx").on(t.organization, t.id),
    index("command_run_running_idx").on(t.id).where(sql`${t.status} = 'running'`),
  ],
);

export const command_run_device = pgTable(
  "command_run_device",
  {
    run: ownedBy(() => command_run.id),
    device: ownedBy(() => device.id),
    state: text().notNull(),
    exit_code: integer(),
    started_at: date(),
    finished_at: date(),
    /** The last 64 KB of stdout and stderr as they came. */
    output: text().notNull().default(""),
    truncated: boolean().notNull().default(false),
    reason: text(),
  },
  (t) => [
    primaryKey({ columns: [t.run, t.device] }),
    index("command_run_device_device_idx").on(t.device),
    check(
      "command_run_device_state_check",
      sql`${t.state} IN ('queued', 'waiting_online', 'running', 'succeeded', 'failed', 'timed_out', 'offline', 'refused', 'cancelled')`,
    ),
  ],
);
