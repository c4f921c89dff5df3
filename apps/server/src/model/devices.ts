import { FREE_PLAN_DEVICE_ALLOWANCE } from "@flotilla/domain";
import { rolloutTargetSql } from "../features/rollouts/queries.ts";
import {
  computed,
  createdAt,
  editable,
  field,
  id,
  many,
  modifiedAt,
  pairResource,
  ref,
  resource,
  synonym,
} from "./dsl.ts";
import { paidPlan } from "./organizations.ts";

/**
 * The device's overall status (spec 2 §4), one SQL expression so lists can filter, sort and
 * count by it. Cloudlink stands in for balena's VPN: a device whose heartbeat and cloudlink
 * disagree has reduced functionality. A device that never connected (no connectivity event, no
 * heartbeat, no cloudlink) is `inactive`, as balena's API and balena-sdk's `getStatus` say of a
 * device that was registered and never came online; one that reports provisioning progress is
 * `configuring` meanwhile. Migrations 0007, 0025 and 0033 index this very expression, and the
 * per-fleet counts' function `flotilla_device_status` (migrations 0032, 0033) computes it: change
 * them together (model.test.ts and fleet-status-counts.test.ts compare them).
 */
/**
 * The release device `d` of fleet `a` should run: its pin, else its wave's in a phased rollout
 * (docs/rollouts.md), else the fleet's, else (tracking the latest) the fleet's latest final
 * successful release. The target state and `device.should_be_running__release` both read it.
 */
export const targetReleaseSql = (d: string, a: string) =>
  `COALESCE(${d}."is_pinned_on__release", ${rolloutTargetSql(d, a)}, ${a}."should_be_running__release",
     CASE WHEN ${a}."should_track_latest_release" THEN (
       SELECT r.id FROM "release" r WHERE r.belongs_to__application = ${a}.id AND r.status = 'success'
          AND r.is_final AND NOT r.is_invalidated ORDER BY r.created_at DESC, r.id DESC LIMIT 1) END)`;

export const overallStatusSql = (d: string) => `CASE
  WHEN NOT ${d}."is_active" THEN 'inactive'
  WHEN ${d}."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
  WHEN ${d}."provisioning_progress" IS NOT NULL THEN 'configuring'
  WHEN ${d}."last_connectivity_event" IS NULL AND ${d}."api_heartbeat_state" = 'unknown' AND NOT ${d}."is_connected_to_vpn" THEN 'inactive'
  WHEN ${d}."api_heartbeat_state" IN ('offline', 'unknown') AND NOT ${d}."is_connected_to_vpn" THEN 'disconnected'
  WHEN (${d}."api_heartbeat_state" IN ('online', 'timeout')) <> ${d}."is_connected_to_vpn" THEN 'reduced-functionality'
  WHEN ${d}."update_status" IN ('downloading', 'downloaded', 'applying changes') OR ${d}."download_progress" IS NOT NULL THEN 'updating'
  ELSE 'operational'
END`;

/**
 * Frozen with its organization (spec 3: a frozen organization's devices are frozen), and on a
 * free plan every device beyond the first FREE_PLAN_DEVICE_ALLOWANCE by id (spec 2 §4,
 * spec-decisions 13): it thaws when devices are removed or the plan is paid. The CASE asks
 * the plan first so paid organizations never count, and the count stops at the allowance.
 * The count names `fa`, not `fo`: a CASE over `fo` alone is pushed down to the scan of every
 * organization, so each other free organization counted earlier devices too (1.5 s for a page of
 * 50 in a fleet of 100,000 devices, bench/big-fleet.ts).
 */
export const isFrozenSql = (d: string) =>
  `EXISTS (SELECT 1 FROM "application" AS fa JOIN "organization" AS fo ON fo."id" = fa."organization" WHERE fa."id" = ${d}."belongs_to__application" AND (CASE WHEN fo."is_frozen" THEN true WHEN ${paidPlan("fo")} THEN false ELSE (SELECT count(*) FROM (SELECT 1 FROM "device" AS zd JOIN "application" AS za ON za."id" = zd."belongs_to__application" WHERE za."organization" = fa."organization" AND zd."id" < ${d}."id" LIMIT ${FREE_PLAN_DEVICE_ALLOWANCE}) AS earlier) >= ${FREE_PLAN_DEVICE_ALLOWANCE} END))`;

const installDevice = ref("device", "device", { writable: true, required: true });
const imageInstallImage = ref("installs__image", "image", { writable: true, required: true });
const serviceInstallService = ref("installs__service", "service", { writable: true, required: true });

export const deviceResources = [
  resource({
    name: "device",
    table: "device",
    alternateKeys: [["uuid"]],
    // `is_online` is computed; a user's write of it is kept apart (features/devices/reported-fields.ts).
    parameters: { is_online: "Boolean" },
    fields: [
      id,
      createdAt,
      modifiedAt,
      ref("actor", "actor"),
      field("uuid", "Text", { writable: true }),
      editable("device_name", "Text"),
      editable("note", "Text"),
      field("local_id", "Text"),
      ref("is_of__device_type", "device_type", { writable: true, required: true }),
      ref("belongs_to__application", "application", { writable: true, required: true }),
      ref("belongs_to__user", "user"),
      // Written by deactivation (spec 2 §4 Device switches); the device hooks check who and when.
      editable("is_active", "Boolean"),
      field("api_heartbeat_state", "Text"),
      field("changed_api_heartbeat_state_on__date", "Date Time"),
      editable("last_connectivity_event", "Date Time"),
      field("is_connected_to_vpn", "Boolean"),
      field("last_vpn_event", "Date Time"),
      field("is_locked_until__date", "Date Time"),
      editable("is_web_accessible", "Boolean"),
      // What the device reports, users may write too, as on balena (features/devices/reported-fields.ts).
      editable("public_address", "Text"),
      editable("ip_address", "Text"),
      editable("mac_address", "Text"),
      editable("memory_usage", "Integer"),
      editable("memory_total", "Integer"),
      editable("storage_block_device", "Text"),
      editable("storage_usage", "Integer"),
      editable("storage_total", "Integer"),
      editable("cpu_usage", "Integer"),
      editable("cpu_temp", "Integer"),
      editable("cpu_id", "Text"),
      editable("is_undervolted", "Boolean"),
      editable("status", "Text"),
      field("download_progress", "Integer"),
      editable("provisioning_progress", "Integer"),
      editable("provisioning_state", "Text"),
      field("update_status", "Text"),
      field("last_update_status_event", "Date Time"),
      editable("os_version", "Text"),
      editable("os_variant", "Text"),
      editable("supervisor_version", "Text"),
      ref("is_running__release", "release", { writable: true }),
      ref("is_pinned_on__release", "release", { writable: true }),
      ref("should_be_managed_by__release", "release", { writable: true }),
      // The host OS release an OS update moves the device to (set by POST /v2/{uuid}/resinhup).
      ref("should_be_operated_by__release", "release"),
      field("latitude", "Text"),
      field("longitude", "Text"),
      editable("custom_latitude", "Text"),
      editable("custom_longitude", "Text"),
      field("location", "Text"),
      editable("is_accessible_by_support_until__date", "Date Time"),
      computed("overall_status", "Text", overallStatusSql),
      // Local mode is a configuration variable the supervisor reads (spec 2 §3).
      computed(
        "is_in_local_mode",
        "Boolean",
        (d) =>
          `EXISTS (SELECT 1 FROM "device_config_variable" AS lm WHERE lm."device" = ${d}."id" AND lm."name" IN ('RESIN_SUPERVISOR_LOCAL_MODE', 'BALENA_SUPERVISOR_LOCAL_MODE') AND lm."value" IN ('1', 'true'))`,
      ),
      computed(
        "overall_progress",
        "Integer",
        (d) =>
          `CASE WHEN ${d}."provisioning_progress" IS NOT NULL THEN ${d}."provisioning_progress" ELSE ${d}."download_progress" END`,
      ),
      // What the heartbeat and cloudlink say, unless a user wrote it since (reported-fields.ts).
      computed(
        "is_online",
        "Boolean",
        (d) =>
          `COALESCE(${d}."written_is_online", ${d}."api_heartbeat_state" IN ('online', 'timeout') OR ${d}."is_connected_to_vpn")`,
      ),
      computed("is_frozen", "Boolean", isFrozenSql),
      // balena's computed target: what the device should run now (its pin, its rollout wave's, the fleet's).
      {
        ...computed(
          "should_be_running__release",
          "Integer",
          (d) =>
            `(SELECT ${targetReleaseSql(d, "sbr_a")} FROM "application" sbr_a WHERE sbr_a."id" = ${d}."belongs_to__application")`,
        ),
        references: "release",
        selectByDefault: false,
      },
    ],
    navigations: [
      ...many(["device_tag", "device__has__tag_key"], "device_tag", "device"),
      ...many(["device_environment_variable", "device__has__env_var_name"], "device_environment_variable", "device"),
      ...many(["device_config_variable", "device__has__config_var_name"], "device_config_variable", "device"),
      ...many(["image_install", "device__installs__image"], "image_install", "device"),
      ...many(["service_install", "device__installs__application__has__service_name"], "service_install", "device"),
    ],
  }),
  pairResource({
    name: "device_tag",
    aliases: ["device__has__tag_key"],
    table: "device_tag",
    parent: { field: "device", target: "device" },
    key: "tag_key",
  }),
  pairResource({
    name: "device__has__env_var_name",
    aliases: ["device_environment_variable"],
    table: "device_environment_variable",
    parent: { field: "device", target: "device" },
    key: "name",
  }),
  pairResource({
    name: "device__has__config_var_name",
    aliases: ["device_config_variable"],
    table: "device_config_variable",
    parent: { field: "device", target: "device" },
    key: "name",
  }),
  resource({
    name: "device__installs__image",
    aliases: ["image_install"],
    table: "image_install",
    alternateKeys: [["device", "installs__image"]],
    fields: [
      id,
      createdAt,
      installDevice,
      imageInstallImage,
      synonym("image", imageInstallImage),
      ref("is_provided_by__release", "release"),
      field("install_date", "Date Time"),
      field("download_progress", "Integer"),
      editable("status", "Text"),
    ],
  }),
  resource({
    name: "device__installs__application__has__service_name",
    aliases: ["service_install"],
    table: "service_install",
    alternateKeys: [["device", "installs__service"]],
    fields: [
      id,
      createdAt,
      installDevice,
      serviceInstallService,
      synonym("service", serviceInstallService),
      synonym("installs__application__has__service_name", serviceInstallService),
      synonym("application__has__service_name", serviceInstallService),
    ],
    navigations: many(
      ["device_service_environment_variable", "device__installs__application__has__service_name__has__name"],
      "device_service_environment_variable",
      "service_install",
    ),
  }),
  pairResource({
    name: "device__installs__application__has__service_name__has__name",
    aliases: ["device_service_environment_variable"],
    table: "device_service_environment_variable",
    parent: {
      field: "service_install",
      target: "service_install",
      synonyms: ["device__installs__application__has__service_name", "device__installs__service"],
    },
    key: "name",
  }),
];
