import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { actor, user } from "./accounts.ts";
import { createdAt, date, id, modifiedAt, optional, ownedBy, requires, shortText } from "./columns.ts";
import { application, device_type, pairs, service } from "./fleets.ts";
import { organization } from "./organizations.ts";
import { image, release } from "./releases.ts";

/**
 * A device. `overall_status`, `overall_progress`, `is_online` and `is_frozen` are computed by the
 * model; `api_heartbeat_state` only changes when the state changes (DESIGN §4), never per heartbeat.
 */
export const device = pgTable(
  "device",
  {
    id: id(),
    created_at: createdAt(),
    modified_at: modifiedAt(),
    actor: integer()
      .notNull()
      .unique()
      .references(() => actor.id),
    uuid: text().notNull().unique(),
    device_name: shortText(),
    note: text(),
    local_id: text(),
    is_of__device_type: requires(() => device_type.id),
    belongs_to__application: ownedBy(() => application.id),
    belongs_to__user: integer().references(() => user.id, { onDelete: "set null" }),
    is_active: boolean().notNull().default(true),
    api_heartbeat_state: text().notNull().default("unknown"),
    changed_api_heartbeat_state_on__date: date(),
    last_connectivity_event: date(),
    is_connected_to_vpn: boolean().notNull().default(false),
    /**
     * `is_online` as a user wrote it through /v7 (balena lets a device's users write what it
     * reports): read as `is_online` until the device's connectivity changes or it reports again.
     */
    written_is_online: boolean(),
    last_vpn_event: date(),
    is_locked_until__date: date(),
    is_web_accessible: boolean().notNull().default(false),
    public_address: text(),
    ip_address: text(),
    mac_address: text(),
    memory_usage: integer(),
    memory_total: integer(),
    storage_block_device: text(),
    storage_usage: integer(),
    storage_total: integer(),
    cpu_usage: integer(),
    cpu_temp: integer(),
    cpu_id: text(),
    is_undervolted: boolean().notNull().default(false),
    status: text(),
    download_progress: integer(),
    provisioning_progress: integer(),
    provisioning_state: text(),
    update_status: text(),
    last_update_status_event: date(),
    os_version: text(),
    os_variant: text(),
    supervisor_version: text(),
    api_port: integer(),
    api_secret: text(),
    is_running__release: optional(() => release.id),
    is_pinned_on__release: optional(() => release.id),
    should_be_managed_by__release: optional(() => release.id),
    /** The host OS release the device is updating to or runs (set when an OS update starts). */
    should_be_operated_by__release: optional(() => release.id),
    latitude: text(),
    longitude: text(),
    custom_latitude: text(),
    custom_longitude: text(),
    location: text(),
    is_accessible_by_support_until__date: date(),
  },
  (t) => [
    index("device_application_name_idx").on(t.belongs_to__application, t.device_name),
    // The free-text filter (LIKE over lower(name), lower(uuid), the status, OS version and IP)
    // is served by pg_trgm GIN indexes created in migration 0025 when the database has pg_trgm,
    // as device_tag's key and value are (drizzle cannot express "only if the extension exists").
    check("device_heartbeat_check", sql`${t.api_heartbeat_state} IN ('online', 'offline', 'timeout', 'unknown')`),
    check(
      "device_update_status_check",
      sql`${t.update_status} IS NULL OR ${t.update_status} IN ('rejected', 'downloading', 'downloaded', 'applying changes', 'aborted', 'done')`,
    ),
  ],
);

export const device_tag = pairs("device_tag", "device", () => device.id, "tag_key");
export const device_environment_variable = pairs("device_environment_variable", "device", () => device.id, "name");
export const device_config_variable = pairs("device_config_variable", "device", () => device.id, "name");

export const image_install = pgTable(
  "image_install",
  {
    id: id(),
    created_at: createdAt(),
    device: ownedBy(() => device.id),
    installs__image: ownedBy(() => image.id),
    is_provided_by__release: ownedBy(() => release.id),
    install_date: date().notNull().defaultNow(),
    download_progress: integer(),
    status: shortText(),
  },
  (t) => [uniqueIndex("image_install_key").on(t.device, t.installs__image)],
);

/** `device__installs__application__has__service_name`: device-service variables hang off it. */
export const service_install = pgTable(
  "service_install",
  {
    id: id(),
    created_at: createdAt(),
    device: ownedBy(() => device.id),
    installs__service: ownedBy(() => service.id),
  },
  (t) => [uniqueIndex("service_install_key").on(t.device, t.installs__service)],
);

export const device_service_environment_variable = pairs(
  "device_service_environment_variable",
  "service_install",
  () => service_install.id,
  "name",
);

/**
 * Device log lines (docs/device-protocol.md "Logs"), written in batches and pruned to the last
 * FLOTILLA_DEVICE_LOG_LINES per device. Not part of the data API: read through /device/v2/{uuid}/logs.
 * Times are milliseconds since the epoch, as balena-sdk reads them; ids are 8 bytes (many lines).
 */
export const device_log = pgTable(
  "device_log",
  {
    id: bigint({ mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    device: ownedBy(() => device.id),
    /** When the server received the line. */
    created_at: bigint({ mode: "number" }).notNull(),
    /** When the device logged it (its own clock). */
    timestamp: bigint({ mode: "number" }).notNull(),
    message: text().notNull(),
    is_system: boolean().notNull(),
    is_std_err: boolean().notNull(),
    /** The agent's service id; no reference: the service may be gone while its lines stay. */
    service_id: integer(),
  },
  (t) => [
    index("device_log_device_idx").on(t.device, t.id),
    // Search (docs/logs.md): a device's lines newest first, and age retention per device.
    index("device_log_device_time_idx").on(t.device, t.timestamp, t.id),
    // A fleet's lines newest first across its devices, when the text matches many lines.
    index("device_log_time_idx").on(t.timestamp, t.id),
    // The text match (ILIKE) is served by a pg_trgm GIN index created in migration 0024 when the
    // database has pg_trgm (drizzle cannot express "only if the extension exists").
  ],
);

/**
 * An organization's own log retention (docs/logs.md), tighter than the server's: lines older than
 * `max_age_days` (at most FLOTILLA_DEVICE_LOG_RETENTION_DAYS) and beyond the newest
 * `max_lines_per_device` (at most FLOTILLA_DEVICE_LOG_LINES) of each device are pruned. Null keeps
 * the server's default.
 */
export const device_log_retention = pgTable(
  "device_log_retention",
  {
    organization: integer()
      .primaryKey()
      .references(() => organization.id, { onDelete: "cascade" }),
    max_age_days: integer(),
    max_lines_per_device: integer(),
    modified_at: modifiedAt(),
  },
  (t) => [
    check("device_log_retention_age_check", sql`${t.max_age_days} IS NULL OR ${t.max_age_days} >= 1`),
    check("device_log_retention_lines_check", sql`${t.max_lines_per_device} IS NULL OR ${t.max_lines_per_device} >= 1`),
  ],
);
