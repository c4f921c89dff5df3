import { runsArchitecture, supervisorMajor } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError, inBalenaWords } from "../../errors.ts";
import { isFrozenSql } from "../../model/devices.ts";
import { RELEASE_RULES } from "../../model/releases.ts";
import type { HookContext, ResourceHooks } from "../../odata/index.ts";
import { mayDo, requireAction } from "../data-api/actions.ts";
import { organizationOfFleet } from "../fleets/queries.ts";
import { isPaidOrganization } from "../organizations/queries.ts";

/**
 * Device settings written through the data API (spec 2 §4 Device switches, Support access,
 * Custom location; §5 Devices; §6 Device action permissions and Other rules): deactivation,
 * moves, pins, support access, custom location, local mode, and frozen devices.
 */

type Db = Pick<Queryable, "query">;
type Body = Record<string, unknown>;

const LOCAL_MODE_VARIABLES = new Set(["BALENA_SUPERVISOR_LOCAL_MODE", "RESIN_SUPERVISOR_LOCAL_MODE"]);
const NUMBER = /^-?\d+(\.\d+)?$/;

const missing = (value: unknown) => value === undefined || value === null;
const actorOf = ({ actorId }: HookContext) => {
  if (actorId === undefined) throw new FlotillaError("forbidden");
  return { actor: actorId, globalRoles: [] as string[] };
};

/**
 * A frozen device (spec 2 §4 Free-plan device freezing) takes no user changes until it thaws:
 * 403 device_frozen. Deleting it stays possible, since that is how it thaws. Its own reports are
 * accepted as always (they never change its target state).
 */
export async function refuseFrozen(db: Db, ids: number[]) {
  if (ids.length === 0) return;
  const { rows } = await db.query(
    `SELECT 1 FROM "device" d WHERE d.id = ANY($1::int[]) AND ${isFrozenSql("d")} LIMIT 1`,
    [ids],
  );
  if (rows.length > 0) throw new FlotillaError("device_frozen");
}

type DeviceFacts = {
  id: number;
  is_active: boolean;
  fleet: number;
  architecture: string;
  supervisor_version: string | null;
  os_version: string | null;
  os_variant: string | null;
  /** Heartbeat online (or timing out) or a cloudlink socket: the device is online (spec 2 §3). */
  is_online: boolean;
};

async function deviceFacts(db: Db, ids: number[]): Promise<DeviceFacts[]> {
  const { rows } = await db.query<DeviceFacts>(
    `SELECT d.id, d.is_active, d.belongs_to__application AS fleet, ca.slug AS architecture,
            d.supervisor_version, d.os_version, d.os_variant,
            (d.api_heartbeat_state IN ('online', 'timeout') OR d.is_connected_to_vpn) AS is_online
       FROM "device" d JOIN "device_type" dt ON dt.id = d.is_of__device_type
       JOIN "cpu_architecture" ca ON ca.id = dt.is_of__cpu_architecture WHERE d.id = ANY($1::int[])`,
    [ids],
  );
  return rows;
}

/** Spec 2 §5: support access date-time cannot be earlier than now; null revokes. */
function checkSupportAccess(body: Body) {
  const until = body.is_accessible_by_support_until__date;
  if (missing(until)) return;
  const time = new Date(until as string | number).getTime();
  if (Number.isNaN(time)) {
    throw new FlotillaError("invalid_parameter", undefined, {
      params: { suppliedValue: String(until), parameterName: "is_accessible_by_support_until__date" },
    });
  }
  if (time < Date.now()) throw new FlotillaError("support_access_in_past");
}

/** Spec 2 §5: latitude and longitude are numbers; "" or null unsets the custom location. */
function checkCustomLocation(body: Body) {
  for (const name of ["custom_latitude", "custom_longitude"]) {
    const value = body[name];
    // Unset is null, whichever way it was asked for (balena-sdk's unsetCustomLocation sends "").
    if (value === "") body[name] = null;
    if (missing(value) || value === "") continue;
    const limit = name === "custom_latitude" ? 90 : 180;
    if (typeof value !== "string" || !NUMBER.test(value.trim()) || Math.abs(Number(value)) > limit) {
      throw new FlotillaError("invalid_parameter", undefined, {
        params: { suppliedValue: String(value), parameterName: name },
      });
    }
    body[name] = value.trim();
  }
}

/**
 * Deactivation (spec 2 §4, §5, §6, §8): application.deactivate-device, a paid plan, not already
 * inactive, and offline (errors.device_must_be_offline): an online device is in use.
 */
async function checkDeactivation(context: HookContext, devices: DeviceFacts[], active: unknown) {
  const { tx } = context;
  for (const device of devices) {
    await requireAction(tx, actorOf(context), "application.deactivate-device", { device: device.id });
    if (active !== false) continue;
    if (!device.is_active) throw new FlotillaError("device_already_inactive");
    if (device.is_online) throw new FlotillaError("device_must_be_offline");
    const organization = await organizationOfFleet(tx, device.fleet);
    if (organization === undefined || !(await isPaidOrganization(tx, organization))) {
      throw new FlotillaError("device_deactivation_paid_only");
    }
  }
}

/**
 * Moving devices to another fleet (spec 2 §5, §6 Other rules): device.move on each device, a
 * role that may move devices into the target fleet, the same CPU architecture; the pinned release
 * stays behind (it belongs to the old fleet).
 */
async function checkMove(context: HookContext, devices: DeviceFacts[], body: Body) {
  const { tx } = context;
  const target = Number(body.belongs_to__application);
  const moving = devices.filter((d) => d.fleet !== target);
  if (moving.length === 0) return;
  const { rows } = await tx.query<{ architecture: string }>(
    `SELECT ca.slug AS architecture FROM "application" a
       JOIN "device_type" dt ON dt.id = a.is_for__device_type
       JOIN "cpu_architecture" ca ON ca.id = dt.is_of__cpu_architecture WHERE a.id = $1`,
    [target],
  );
  const fleet = rows[0];
  if (!fleet || !(await mayDo(tx, actorOf(context), "device.move", { fleet: target }))) {
    throw new FlotillaError("device_move_target_forbidden");
  }
  for (const device of moving) {
    await requireAction(tx, actorOf(context), "device.move", { device: device.id });
    // A 64-bit ARM device may join a 32-bit ARM fleet, as balena allows it.
    if (!runsArchitecture(device.architecture, fleet.architecture))
      throw new FlotillaError("no_compatible_architecture");
  }
  if (body.is_pinned_on__release === undefined) body.is_pinned_on__release = null;
}

/**
 * A device's type changes only to one of its (new) fleet's CPU architecture (spec 2 §5): an
 * artik10 (armv7hf) never joins an aarch64 fleet this way either.
 */
async function checkDeviceType(tx: Db, devices: DeviceFacts[], body: Body) {
  const type = Number(body.is_of__device_type);
  const { rows } = await tx.query<{ architecture: string }>(
    `SELECT ca.slug AS architecture FROM "device_type" dt
       JOIN "cpu_architecture" ca ON ca.id = dt.is_of__cpu_architecture WHERE dt.id = $1`,
    [type],
  );
  const architecture = rows[0]?.architecture;
  // An unknown type is the data API's reference check to refuse.
  if (architecture === undefined) return;
  const fleets = missing(body.belongs_to__application)
    ? [...new Set(devices.map((d) => d.fleet))]
    : [Number(body.belongs_to__application)];
  const { rows: fleetArchitectures } = await tx.query<{ architecture: string | null }>(
    `SELECT ca.slug AS architecture FROM "application" a JOIN "device_type" dt ON dt.id = a.is_for__device_type
       LEFT JOIN "cpu_architecture" ca ON ca.id = dt.is_of__cpu_architecture WHERE a.id = ANY($1::int[])`,
    [fleets],
  );
  const mismatched = fleetArchitectures.filter((fleet) => !runsArchitecture(architecture, fleet.architecture));
  if (mismatched.length > 0) throw new FlotillaError("no_compatible_architecture");
}

/** A pinned release is one of the device's (new) fleet. */
async function checkPin(tx: Db, devices: DeviceFacts[], body: Body) {
  const release = body.is_pinned_on__release;
  if (missing(release)) return;
  const fleets = new Set(
    missing(body.belongs_to__application) ? devices.map((d) => d.fleet) : [Number(body.belongs_to__application)],
  );
  const { rows } = await tx.query<{ fleet: number }>(
    `SELECT belongs_to__application AS fleet FROM "release" WHERE id = $1`,
    [Number(release)],
  );
  const owner = rows[0]?.fleet;
  if (owner === undefined || [...fleets].some((f) => f !== owner)) {
    throw inBalenaWords("device_release_not_in_fleet", RELEASE_RULES.device, { release: String(release) });
  }
}

export const deviceSettingsHooks: ResourceHooks = {
  async beforeUpdate(context) {
    const { tx, ids, body } = context;
    await refuseFrozen(tx, ids);
    checkSupportAccess(body);
    checkCustomLocation(body);
    const devices = await deviceFacts(tx, ids);
    if (body.is_active !== undefined) await checkDeactivation(context, devices, body.is_active);
    if (!missing(body.belongs_to__application)) await checkMove(context, devices, body);
    if (!missing(body.is_of__device_type)) await checkDeviceType(tx, devices, body);
    await checkPin(tx, devices, body);
  },
};

/** Local mode (spec 2 §5): supervisor 4 or later, not OS 1.x, a development OS variant. */
export function localModeRefusal(device: Pick<DeviceFacts, "supervisor_version" | "os_version" | "os_variant">) {
  if (!((supervisorMajor(device.supervisor_version) ?? 0) >= 4)) return "local_mode_supervisor_too_old" as const;
  if (/^(balenaOS |Resin OS |resinOS )?1\./i.test(device.os_version ?? ""))
    return "local_mode_os_not_supported" as const;
  const isDev = device.os_variant === "dev" || /\bdev\b|\(dev\)|\.dev$/i.test(device.os_version ?? "");
  if (!isDev) return "local_mode_dev_variant_required" as const;
  return undefined;
}

const turnsLocalModeOn = (name: unknown, value: unknown) =>
  typeof name === "string" && LOCAL_MODE_VARIABLES.has(name) && (value === "1" || value === "true");

async function checkLocalMode(tx: Db, deviceIds: number[]) {
  for (const device of await deviceFacts(tx, deviceIds)) {
    const refusal = localModeRefusal(device);
    if (refusal) throw new FlotillaError(refusal);
  }
}

/** Device config variables: local mode's conditions, and no change to a frozen device. */
export const deviceConfigVariableHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    const device = Number(body.device);
    // A missing or malformed device is the data API's 400 to give, after the hooks.
    if (!Number.isSafeInteger(device)) return;
    await refuseFrozen(tx, [device]);
    if (turnsLocalModeOn(body.name, body.value)) await checkLocalMode(tx, [device]);
  },
  async beforeUpdate({ tx, ids, body }) {
    const { rows } = await tx.query<{ device: number; name: string; value: string }>(
      `SELECT device, name, value FROM "device_config_variable" WHERE id = ANY($1::int[])`,
      [ids],
    );
    await refuseFrozen(
      tx,
      rows.map((r) => r.device),
    );
    const switchedOn = rows.filter((r) => turnsLocalModeOn(body.name ?? r.name, body.value ?? r.value));
    await checkLocalMode(
      tx,
      switchedOn.map((r) => r.device),
    );
  },
};

/**
 * A frozen device's tags and environment variables stay as they are too. `table` holds rows with
 * a `device` column.
 */
export function frozenDeviceChildHooks(table: "device_tag" | "device_environment_variable"): ResourceHooks {
  const devicesOf = async (tx: Db, ids: number[]) =>
    (await tx.query<{ device: number }>(`SELECT device FROM "${table}" WHERE id = ANY($1::int[])`, [ids])).rows.map(
      (r) => r.device,
    );
  return {
    async beforeCreate({ tx, body }) {
      const device = Number(body.device);
      if (Number.isSafeInteger(device)) await refuseFrozen(tx, [device]);
    },
    async beforeCreateMany({ tx, bodies }) {
      await refuseFrozen(
        tx,
        bodies.map((body) => Number(body.device)).filter((device) => Number.isSafeInteger(device)),
      );
    },
    async beforeUpdate({ tx, ids }) {
      await refuseFrozen(tx, await devicesOf(tx, ids));
    },
  };
}
