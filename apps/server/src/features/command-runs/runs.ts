import {
  COMMAND_RUN_LIMITS,
  type CommandDeviceState,
  hostOsAccessSupported,
  summarizeCommandStates,
} from "@flotilla/domain";
import { z } from "zod";
import type { Database } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { recordAudit } from "../audit/record.ts";
import { mayDo } from "../data-api/actions.ts";
import type { Relay } from "../devices/relay.ts";
import { SERVICE_NAME } from "../terminal/access.ts";
import {
  type CandidateDevice,
  creatorNow,
  devicesByKey,
  devicesOfFleet,
  fleetOrganization,
  fleetsOfRun,
  insertRun,
  type RunDeviceRow,
  type RunRow,
  runById,
  runDevices,
  withTag,
} from "./queries.ts";
import type { CommandScheduler, RunDevice } from "./scheduler.ts";

/** Starting, reading and answering bulk commands (docs/bulk-commands.md). */

const L = COMMAND_RUN_LIMITS;
const whole = (name: string, min: number, max: number, fallback: number) =>
  z
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    .default(fallback);

export const newRunBody = z
  .object({
    command: z
      .string({ error: "command is required" })
      .refine((text) => text.trim() !== "", "must not be empty")
      .refine((text) => text.length <= L.commandChars, `must be at most ${L.commandChars} characters`)
      .refine((text) => !text.includes("\0"), "must not contain NUL characters"),
    target: z
      .union([z.literal("host"), z.object({ service: z.string().regex(SERVICE_NAME, "must be a service name") })], {
        error: 'must be "host" or {"service": "name"}',
      })
      .default("host"),
    devices: z
      .array(
        z.union([z.number().int().positive(), z.string().regex(/^[0-9a-f]{7,62}$/, "must be a device uuid")], {
          error: "must be device ids or uuids",
        }),
      )
      .min(1, "must name at least one device")
      .max(L.devicesPerRun, `must name at most ${L.devicesPerRun} devices`)
      .optional(),
    fleet: z.number({ error: "must be a fleet id" }).int().positive().optional(),
    filter: z.object({ tag_key: z.string().min(1).max(100), tag_value: z.string().max(1000).optional() }).optional(),
    timeout_s: whole("timeout_s", L.timeoutS.min, L.timeoutS.max, L.timeoutS.default),
    concurrency: whole("concurrency", L.concurrency.min, L.concurrency.max, L.concurrency.default),
    queue_window_s: whole("queue_window_s", L.queueWindowS.min, L.queueWindowS.max, L.queueWindowS.default),
  })
  .refine((body) => (body.devices === undefined) !== (body.fleet === undefined), {
    message: "name either devices or a fleet",
  });

export type NewRunBody = z.output<typeof newRunBody>;

/**
 * Whether a device's host OS takes host commands: balenaOS before 2.7.5 has no host access (as
 * for the terminal, spec 2 §7). Unlike the terminal's check, an OS that is not balenaOS (a real
 * agent on Debian reports "Debian GNU/Linux 12 (bookworm)") or none reported yet is not refused
 * here: the rule is about old balenaOS, and the device itself refuses what it cannot run.
 */
export function hostCommandsSupported(osVersion: string | null): boolean {
  if (!osVersion || !/balena|resin/i.test(osVersion)) return true;
  return hostOsAccessSupported(osVersion);
}

/** The devices a run addresses, after the caller's read permission (others are "not found"). */
async function selectDevices(db: Database, caller: Caller, body: NewRunBody): Promise<CandidateDevice[]> {
  const readable = new Map<number, boolean>();
  const mayRead = async (fleet: number) => {
    if (!readable.has(fleet)) readable.set(fleet, await mayDo(db, caller, "device.read", { fleet }));
    return readable.get(fleet) === true;
  };
  if (body.fleet !== undefined) {
    if (!(await fleetOrganization(db, body.fleet)) || !(await mayRead(body.fleet))) {
      throw new FlotillaError("not_found", `Fleet not found: ${body.fleet}`);
    }
    const tag = body.filter ? { key: body.filter.tag_key, value: body.filter.tag_value } : undefined;
    const devices = await devicesOfFleet(db, body.fleet, tag, L.devicesPerRun + 1);
    if (devices.length > L.devicesPerRun) {
      throw new FlotillaError(
        "bad_request",
        `A run reaches at most ${L.devicesPerRun} devices; narrow it with a filter`,
      );
    }
    return devices;
  }
  const keys = body.devices ?? [];
  const ids = keys.filter((key): key is number => typeof key === "number");
  const uuids = keys.filter((key): key is string => typeof key === "string");
  const found = await devicesByKey(db, ids, uuids);
  const visible: CandidateDevice[] = [];
  for (const device of found) if (await mayRead(device.fleet)) visible.push(device);
  const missing = keys.filter(
    (key) => !visible.some((device) => (typeof key === "number" ? device.id === key : device.uuid === key)),
  );
  if (missing.length > 0) {
    throw new FlotillaError("device_not_found", undefined, { params: { device: missing.slice(0, 10).join(", ") } });
  }
  if (!body.filter) return visible;
  const tagged = await withTag(
    db,
    visible.map((device) => device.id),
    body.filter.tag_key,
    body.filter.tag_value,
  );
  return visible.filter((device) => tagged.has(device.id));
}

const permissionFor = (target: string) => (target === "host" ? "device.ssh-host" : "device.ssh");

/** The devices on which the caller holds `permission` (asked once per fleet). */
async function devicesPermitted(
  db: Pick<Database, "query">,
  caller: Pick<Caller, "actor" | "globalRoles">,
  permission: string,
  devices: { id: number; fleet: number }[],
): Promise<Set<number>> {
  const allowedFleets = new Map<number, boolean>();
  const permitted = new Set<number>();
  for (const device of devices) {
    if (!allowedFleets.has(device.fleet)) {
      allowedFleets.set(device.fleet, await mayDo(db, caller, permission, { fleet: device.fleet }));
    }
    // Staff may hold the permission for single devices (support access), so those are asked per device.
    const allowed =
      allowedFleets.get(device.fleet) === true ||
      (caller.globalRoles.length > 0 && (await mayDo(db, caller, permission, { device: device.id })));
    if (allowed) permitted.add(device.id);
  }
  return permitted;
}

/**
 * Asked when devices' commands start (a queued run may start hours later): a device whose run's
 * creator lost the right to it, or whose run was started with an API key since deleted or
 * expired, is refused with the reason. Answers the refused devices.
 */
export async function refusalsAtStart(
  db: Pick<Database, "query">,
  run: Pick<RunRow, "created_by" | "api_key" | "target">,
  deviceIds: number[],
): Promise<Map<number, string>> {
  const refusals = new Map<number, string>();
  const creator = await creatorNow(db, run, deviceIds);
  if (creator.actor === null || !creator.keyValid) {
    const reason =
      creator.actor === null
        ? "The run's creator no longer exists"
        : "The API key that started the run was deleted or has expired";
    for (const id of deviceIds) refusals.set(id, reason);
    return refusals;
  }
  const permission = permissionFor(run.target);
  const devices = [...creator.fleets].map(([id, fleet]) => ({ id, fleet }));
  const permitted = await devicesPermitted(
    db,
    { actor: creator.actor, globalRoles: creator.globalRoles },
    permission,
    devices,
  );
  for (const id of deviceIds) {
    if (!creator.fleets.has(id)) refusals.set(id, "The device was deleted");
    else if (!permitted.has(id))
      refusals.set(id, `The run's creator may no longer run commands on this device (${permission})`);
  }
  return refusals;
}

/**
 * Creates a run: each device is queued (online), waiting_online or offline (per the queue
 * window), or refused (no permission for the target, or a host OS without host access). The
 * start is audited in the same transaction; then the scheduler takes it.
 */
export async function createRun(
  ctx: { db: Database; relay: Relay; scheduler: CommandScheduler; instance: string },
  caller: Caller & { user: NonNullable<Caller["user"]> },
  body: NewRunBody,
  clientAddress: string,
) {
  const { db, relay, scheduler } = ctx;
  const devices = await selectDevices(db, caller, body);
  if (devices.length === 0) throw new FlotillaError("bad_request", "No device matches the selection");
  const organizations = new Set(devices.map((device) => device.organization));
  if (organizations.size > 1) {
    throw new FlotillaError("bad_request", "A run's devices must belong to one organization");
  }
  const organization = devices[0]?.organization as number;
  const target = body.target === "host" ? "host" : body.target.service;
  const permission = permissionFor(target);
  const permitted = await devicesPermitted(db, caller, permission, devices);
  const states: { device: CandidateDevice; state: CommandDeviceState; reason: string | null }[] = [];
  for (const device of devices) {
    if (!permitted.has(device.id)) {
      states.push({ device, state: "refused", reason: `You may not run commands on this device (${permission})` });
    } else if (target === "host" && !hostCommandsSupported(device.os_version)) {
      states.push({ device, state: "refused", reason: "Host OS access is only available for certain OS versions" });
    } else if (await relay.ownerOf(device.id)) {
      states.push({ device, state: "queued", reason: null });
    } else if (body.queue_window_s > 0) {
      states.push({ device, state: "waiting_online", reason: null });
    } else {
      states.push({ device, state: "offline", reason: "The device is offline" });
    }
  }
  const created = await db.transaction(async (tx) => {
    const run = await insertRun(tx, {
      organization,
      fleet: body.fleet ?? (new Set(devices.map((d) => d.fleet)).size === 1 ? (devices[0]?.fleet ?? null) : null),
      createdBy: caller.user.id,
      apiKey: caller.apiKey?.id ?? null,
      command: body.command,
      target,
      timeoutS: body.timeout_s,
      concurrency: body.concurrency,
      queueWindowS: body.queue_window_s,
      instance: ctx.instance,
      devices: states.map(({ device, state, reason }) => ({ id: device.id, state, reason })),
    });
    await recordAudit(
      tx,
      { user: caller.user.id, apiKey: caller.apiKey?.id, clientAddress },
      {
        action: "command_run.started",
        organization,
        targetType: "command_run",
        targetId: run.id,
        details: {
          command: body.command,
          target,
          device_count: states.length,
          refused: states.filter((s) => s.state === "refused").length,
          timeout_s: body.timeout_s,
          concurrency: body.concurrency,
          queue_window_s: body.queue_window_s,
        },
      },
    );
    return run;
  });
  const row = await runById(db, created.id);
  if (!row) throw new Error("the new run vanished");
  const now = new Date();
  scheduler.schedule(
    row,
    states.map(
      ({ device, state, reason }): RunDevice => ({
        id: device.id,
        uuid: device.uuid,
        name: device.name,
        state,
        exitCode: null,
        startedAt: null,
        finishedAt: state === "offline" || state === "refused" ? now : null,
        output: "",
        truncated: false,
        reason,
      }),
    ),
  );
  return {
    id: row.id,
    devices: states.map(({ device, state, reason }) => ({
      id: device.id,
      uuid: device.uuid,
      name: device.name,
      state,
      reason,
    })),
  };
}

/**
 * The run when the caller may read it: an administrator of its organization, or its creator while
 * they may still read a device of one of its fleets (a creator removed from them reads nothing more).
 */
export async function readableRun(db: Database, caller: Caller, id: number): Promise<RunRow> {
  const run = await runById(db, id);
  const mayRead =
    run &&
    ((await mayDo(db, caller, "organization.read_audit_log", { organization: run.organization })) ||
      (caller.user && run.created_by === caller.user.id && (await readsAFleetOf(db, caller, run))));
  if (!run || !mayRead) throw new FlotillaError("not_found", `Command run not found: ${id}`);
  return run;
}

type DeviceView = Omit<RunDeviceRow, "device" | "started_at" | "finished_at"> & {
  id: number;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
};

const deviceView = ({ device, ...row }: RunDeviceRow): DeviceView => ({
  id: device,
  ...row,
  started_at: row.started_at ? new Date(row.started_at).toISOString() : null,
  finished_at: row.finished_at ? new Date(row.finished_at).toISOString() : null,
  duration_ms:
    row.started_at && row.finished_at ? new Date(row.finished_at).getTime() - new Date(row.started_at).getTime() : null,
});

export const runView = (run: RunRow) => ({
  id: run.id,
  organization: run.organization,
  fleet: run.fleet,
  created_by: run.created_by,
  created_by_username: run.created_by_username ?? null,
  api_key: run.api_key,
  command: run.command,
  target: run.target === "host" ? "host" : { service: run.target },
  timeout_s: run.timeout_s,
  concurrency: run.concurrency,
  queue_window_s: run.queue_window_s,
  status: run.status,
  created_at: new Date(run.created_at).toISOString(),
  finished_at: run.finished_at ? new Date(run.finished_at).toISOString() : null,
});

/**
 * The run with its devices and summary: while it is scheduled here, the devices as they are in
 * memory (output not written yet included); else as the database has them.
 */
export async function runDetail(db: Database, scheduler: CommandScheduler, run: RunRow) {
  // The live view first: a run that ends while its rows are read is still in memory then.
  const live = scheduler.live(run.id);
  const stored = await runDevices(db, run.id);
  const byId = new Map(live?.map((device) => [device.id, device]));
  const devices = stored.map((row) => {
    const device = byId.get(row.device);
    if (!device) return deviceView(row);
    return deviceView({
      ...row,
      state: device.state,
      exit_code: device.exitCode,
      started_at: device.startedAt,
      finished_at: device.finishedAt,
      output: device.output,
      truncated: device.truncated,
      reason: device.reason,
    });
  });
  return {
    ...runView(run),
    summary: summarizeCommandStates(devices.map((device) => device.state)),
    devices,
  };
}

async function readsAFleetOf(
  db: Database,
  caller: Caller,
  run: RunRow,
  known = new Map<number, boolean>(),
): Promise<boolean> {
  const fleets = run.fleet !== null ? [run.fleet] : await fleetsOfRun(db, run.id);
  for (const fleet of fleets) {
    if (!known.has(fleet)) known.set(fleet, await mayDo(db, caller, "device.read", { fleet }));
    if (known.get(fleet)) return true;
  }
  return false;
}

/** The runs of a creator's list they may still read (see readableRun). */
export async function readableByCreator<T extends RunRow>(db: Database, caller: Caller, runs: T[]): Promise<T[]> {
  const known = new Map<number, boolean>();
  const kept: T[] = [];
  for (const run of runs) if (await readsAFleetOf(db, caller, run, known)) kept.push(run);
  return kept;
}
