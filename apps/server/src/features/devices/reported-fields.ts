import { FlotillaError } from "../../errors.ts";
import type { WriteValues } from "../../odata/compile-write.ts";
import type { HookContext, ResourceHooks } from "../../odata/index.ts";
import { writeUserIsOnline } from "./queries.ts";
import type { DeviceServices } from "./services.ts";

/**
 * Fields a device reports that its users may also write through /v7, as balena lets them
 * (balena-sdk scripts and its test fixtures set os_version, addresses, metrics, `is_online`,
 * `last_connectivity_event`, `is_running__release`…). The lengths are balena's, and so are the
 * words of its refusals. A written value stands until the device reports that field again: its
 * next state report writes every field it reports, the user's among them.
 *
 * `is_online` is computed from the heartbeat and cloudlink here, so a written one is kept apart
 * and read as `is_online` until the device's connectivity changes or it reports again; writing it
 * is a connectivity event (`last_connectivity_event` becomes now unless the write names one), as
 * on balena. It never changes `overall_status`, which follows the heartbeat and cloudlink only.
 */
const MAX_LENGTH: Record<string, [words: string, length: number]> = {
  status: ["a status", 50],
  os_version: ["an os version", 70],
  supervisor_version: ["a supervisor version", 20],
  public_address: ["a public address", 50],
  ip_address: ["an ip address", 2000],
  mac_address: ["a mac address", 900],
  provisioning_state: ["a provisioning state", 255],
  cpu_id: ["a cpu id", 255],
};

/** The fields a device's state report writes too (state-report.ts): a user's write of them stands until the next report. */
const REPORTED_FIELDS = new Set([
  "status",
  "os_version",
  "os_variant",
  "supervisor_version",
  "ip_address",
  "mac_address",
  "cpu_id",
  "is_undervolted",
  "provisioning_progress",
  "provisioning_state",
  "cpu_usage",
  "cpu_temp",
  "memory_usage",
  "memory_total",
  "storage_block_device",
  "storage_usage",
  "storage_total",
  "is_running__release",
]);

const OS_VARIANTS = new Set(["prod", "dev"]);

function checkReportedFields(body: WriteValues) {
  for (const [name, [words, length]] of Object.entries(MAX_LENGTH)) {
    const value = body[name];
    if (typeof value === "string" && value.length > length) {
      throw new FlotillaError(
        "bad_request",
        `It is necessary that each device that has ${words}, has ${words} that has a Length (Type) that is less than or equal to ${length}.`,
      );
    }
  }
  const variant = body.os_variant;
  if (variant !== undefined && variant !== null && !OS_VARIANTS.has(String(variant))) {
    throw new FlotillaError("bad_request", 'os_variant must be "prod", "dev" or null');
  }
  const progress = body.provisioning_progress;
  if (typeof progress === "number" && (progress < 0 || progress > 100)) {
    throw new FlotillaError("bad_request", "provisioning_progress must be from 0 to 100, or null");
  }
}

/** Takes `is_online` out of the body (it is no column); writing it is a connectivity event. */
function takeIsOnline(body: WriteValues): boolean | null | undefined {
  if (!("is_online" in body)) return undefined;
  const value = body.is_online as boolean | null | undefined;
  delete body.is_online;
  if (value === undefined) return undefined;
  if (value !== null && body.last_connectivity_event === undefined) {
    body.last_connectivity_event = new Date().toISOString();
  }
  return value;
}

type Devices = Pick<DeviceServices, "userWroteReportedFields">;

export function deviceReportedFieldHooks(devices: Devices): ResourceHooks {
  /** The `is_online` of a write, kept from before its INSERT or UPDATE (it is no column) to after it. */
  const onlineOf = new WeakMap<WriteValues, boolean | null>();
  const takeOnline = (body: WriteValues) => {
    checkReportedFields(body);
    const online = takeIsOnline(body);
    if (online !== undefined) onlineOf.set(body, online);
  };

  async function afterWrite(
    context: HookContext,
    ids: number[],
    body: WriteValues,
    online: boolean | null | undefined,
  ) {
    if (online !== undefined) await writeUserIsOnline(context.tx, ids, online);
    const written = Object.keys(body).filter((name) => REPORTED_FIELDS.has(name));
    if (written.length > 0 || online !== undefined) {
      context.afterCommit(() => devices.userWroteReportedFields(ids, written));
    }
  }

  return {
    beforeCreate: ({ body }) => takeOnline(body),
    afterCreate: (context) => afterWrite(context, [context.id], context.body, onlineOf.get(context.body)),
    beforeUpdate: ({ body }) => takeOnline(body),
    afterUpdate: (context) => afterWrite(context, context.ids, context.body, onlineOf.get(context.body)),
  };
}
