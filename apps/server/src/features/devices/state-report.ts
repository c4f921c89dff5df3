import { z } from "zod";
import type { Queryable } from "../../db/index.ts";
import { targetReleaseSql } from "../../model/devices.ts";
import { deliveriesFrom } from "../webhooks/events.ts";
import { inPieces } from "./batches.ts";
import {
  endImageInstalls,
  type ImageInstallRow,
  releaseByCommit,
  releaseImagesByService,
  writeImageInstalls,
} from "./queries.ts";

/**
 * Current state reports (docs/device-protocol.md "Current state"): the latest report of each
 * device is kept in memory and only the fields that changed since the last write reach the
 * database, in batches (DESIGN §8): one UPDATE per set of changed columns every flush. Service
 * statuses of known releases become image installs (and service installs), written the same way.
 */

export const STATE_REPORT_BODY_LIMIT = 64 * 1024;
export const DEFAULT_FLUSH_MS = 5000;
/**
 * A report that may change a rollout wave's verdict (release, update status, service status) of
 * a device whose fleet is rolling out is written this soon, not at the next flush: the next wave
 * starts within about a second of the gate being met (docs/rollouts.md).
 */
export const ROLLOUT_FLUSH_MS = 500;

const text = (max: number) => z.string().max(max);
const megabytes = z.number().min(0).max(1e9);
const percent = z.number().min(0).max(100);
const UPDATE_STATUSES = [
  "idle",
  "downloading",
  "downloaded",
  "applying changes",
  "done",
  "aborted",
  "rejected",
] as const;

/** At most `max` keys: a record is as unbounded as an array otherwise. */
const boundedRecord = <T extends z.ZodType>(value: T, max: number) =>
  z.record(z.string().max(200), value).refine((r) => Object.keys(r).length <= max, `at most ${max} entries`);

const serviceReport = z.object({
  image: text(500).nullish(),
  status: text(100).nullish(),
  download_progress: percent.nullish(),
});

const appReport = z.object({
  release_uuid: text(100).nullish(),
  releases: boundedRecord(
    z.object({ update_status: text(50).nullish(), services: boundedRecord(serviceReport, 100).optional() }),
    10,
  ).optional(),
});

export const deviceReport = z.object({
  status: text(100).nullish(),
  os_version: text(255).nullish(),
  os_variant: text(50).nullish(),
  supervisor_version: text(50).nullish(),
  ip_address: text(1000).nullish(),
  mac_address: text(1000).nullish(),
  api_port: z.number().int().min(0).max(65535).nullish(),
  /** The Supervisor API's key: kept sealed by features/vpn, never in the device's columns. */
  api_secret: text(255).nullish(),
  cpu_usage: percent.nullish(),
  cpu_temp: z.number().min(-100).max(200).nullish(),
  cpu_id: text(255).nullish(),
  memory_usage: megabytes.nullish(),
  memory_total: megabytes.nullish(),
  storage_usage: megabytes.nullish(),
  storage_total: megabytes.nullish(),
  storage_block_device: text(255).nullish(),
  is_undervolted: z.boolean().nullish(),
  provisioning_progress: percent.nullish(),
  provisioning_state: text(255).nullish(),
  download_progress: percent.nullish(),
  update_status: z.enum(UPDATE_STATUSES).nullish(),
  apps: boundedRecord(appReport, 10).optional(),
});

export const stateReportBody = boundedRecord(deviceReport, 1);
export type DeviceReport = z.infer<typeof deviceReport>;

/** Device columns a report writes, with their SQL type for the batch statement. */
const COLUMNS = {
  status: "text",
  os_version: "text",
  os_variant: "text",
  supervisor_version: "text",
  ip_address: "text",
  mac_address: "text",
  api_port: "int",
  cpu_usage: "int",
  cpu_temp: "int",
  cpu_id: "text",
  memory_usage: "int",
  memory_total: "int",
  storage_usage: "int",
  storage_total: "int",
  storage_block_device: "text",
  is_undervolted: "boolean",
  provisioning_progress: "int",
  provisioning_state: "text",
  download_progress: "int",
  update_status: "text",
  last_update_status_event: "timestamptz",
  is_running__release: "int",
  // Not reported: a report ends an `is_online` a user wrote (reported-fields.ts), once.
  written_is_online: "boolean",
} as const;
type Column = keyof typeof COLUMNS;
type Value = string | number | boolean | null;

const INTEGER_COLUMNS = new Set<string>(Object.entries(COLUMNS).flatMap(([c, t]) => (t === "int" ? [c] : [])));

/** What a report means for the device's columns (undefined: not reported, left as it is). */
function columnsOf(report: DeviceReport): Partial<Record<Column, Value>> {
  const values: Partial<Record<Column, Value>> = {};
  for (const column of Object.keys(COLUMNS) as Column[]) {
    if (!(column in report)) continue;
    let value = report[column as keyof DeviceReport] as Value | undefined;
    if (value === undefined) continue;
    if (typeof value === "number" && INTEGER_COLUMNS.has(column)) value = Math.round(value);
    values[column] = value;
  }
  // `idle` is no update at all; an operational device clears its provisioning fields.
  if (values.update_status === "idle") values.update_status = null;
  if (values.provisioning_state === "") values.provisioning_state = null;
  values.written_is_online = null;
  return values;
}

type Db = Pick<Queryable, "query">;

/**
 * The report's UPDATE, and in the same statement device.status_changed, device.update_finished
 * (update status `done`) and device.update_failed (`aborted`, `rejected`) for the webhooks that
 * want them: `old` sees the rows as they were before the update (one snapshot for the statement).
 */
/**
 * A report of a device under way to another release: downloading, installing or applying it. Its
 * events name that release (`release`), not the one it still runs (`running_release`).
 */
const UPDATING_SQL = `(c.update_status IN ('downloading', 'downloaded', 'applying changes')
  OR lower(c.status) IN ('downloading', 'installing', 'updating'))`;

function deviceEventsSql(set: string, types: string): string {
  return `WITH v AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(${types})),
     old AS (SELECT d.id, d.status, d.update_status FROM "device" d JOIN v ON v.id = d.id),
     changed AS (
       UPDATE "device" d SET ${set} FROM v WHERE d.id = v.id
       RETURNING d.id, d.uuid, d.device_name, d.belongs_to__application, d.status, d.update_status, d.is_running__release),
     source AS (
       SELECT a.organization, a.id AS fleet, e.type,
              jsonb_build_object('device', c.uuid, 'device_id', c.id, 'name', c.device_name, 'status', c.status,
                                 'previous_status', o.status, 'update_status', c.update_status,
                                 'release', CASE WHEN ${UPDATING_SQL} THEN COALESCE(t.release, c.is_running__release)
                                                 ELSE c.is_running__release END,
                                 'running_release', c.is_running__release, 'target_release', t.release) AS data
         FROM changed c JOIN old o ON o.id = c.id JOIN "application" a ON a.id = c.belongs_to__application
         -- The release the device should run (what it downloads while it updates).
         LEFT JOIN LATERAL (SELECT ${targetReleaseSql("td", "a")} AS release FROM "device" td WHERE td.id = c.id) t ON true
        CROSS JOIN LATERAL (VALUES
          (CASE WHEN c.status IS DISTINCT FROM o.status THEN 'device.status_changed' END),
          (CASE WHEN c.update_status IS NOT DISTINCT FROM o.update_status THEN NULL
                WHEN c.update_status = 'done' THEN 'device.update_finished'
                WHEN c.update_status IN ('aborted', 'rejected') THEN 'device.update_failed' END)) AS e(type)
        WHERE e.type IS NOT NULL)
     ${deliveriesFrom("source", "s.type")}`;
}

export function createStateReports(options: {
  db: Db;
  flushMs?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}) {
  const { db, now = Date.now, onError = () => undefined } = options;
  const written = new Map<number, Partial<Record<Column, Value>>>();
  const pending = new Map<number, Partial<Record<Column, Value>>>();
  /** `fleet:commit` → release id (null: no such release), bounded. */
  const releases = new Map<string, number | null>();
  /** release id → its images by service name, bounded. */
  const releaseImages = new Map<number, Map<string, { image: number; service: number }>>();
  /** `device:image` → the last written `status:progress`; pending installs by the same key. */
  const writtenInstalls = new Map<string, string>();
  const pendingInstalls = new Map<string, ImageInstallRow>();
  /** device → the images of its last complete report; devices whose other installs are to end. */
  const reportedImages = new Map<number, number[]>();
  const pendingPrunes = new Map<number, number[]>();
  let flushing: Promise<void> | undefined;
  /** Fleets of the devices whose changed reports are pending, and who wants to know once they are written. */
  const pendingFleets = new Set<number>();
  const writtenListeners: ((fleets: number[]) => void)[] = [];
  /** Fleets with a running rollout (the rollout engine says which), and the early flush planned for them. */
  let rollingOut = new Set<number>();
  let soon: NodeJS.Timeout | undefined;
  const flushSoon = () => {
    soon ??= setTimeout(() => {
      soon = undefined;
      flush().catch(onError);
    }, ROLLOUT_FLUSH_MS);
    soon.unref();
  };

  async function releaseOf(fleet: number, commit: string): Promise<number | undefined> {
    const key = `${fleet}:${commit}`;
    if (!releases.has(key)) {
      if (releases.size >= 10_000) releases.clear();
      releases.set(key, (await releaseByCommit(db, fleet, commit)) ?? null);
    }
    return releases.get(key) ?? undefined;
  }

  async function runningRelease(fleet: number, report: DeviceReport): Promise<number | null | undefined> {
    const commit = Object.values(report.apps ?? {}).find((app) => app.release_uuid)?.release_uuid;
    return commit ? releaseOf(fleet, commit) : undefined;
  }

  /** Service statuses of the reported releases, as image installs to write when changed. */
  async function recordInstalls(device: { id: number; fleet: number }, report: DeviceReport) {
    const images: number[] = [];
    let complete = report.apps !== undefined;
    for (const app of Object.values(report.apps ?? {})) {
      for (const [commit, reported] of Object.entries(app.releases ?? {})) {
        const release = await releaseOf(device.fleet, commit);
        if (release === undefined) {
          complete = false;
          continue;
        }
        let releaseImagesOf = releaseImages.get(release);
        if (!releaseImagesOf) {
          if (releaseImages.size >= 1000) releaseImages.clear();
          releaseImagesOf = await releaseImagesByService(db, release);
          releaseImages.set(release, releaseImagesOf);
        }
        for (const [name, service] of Object.entries(reported.services ?? {})) {
          const known = releaseImagesOf.get(name);
          if (!known || !service.status) continue;
          images.push(known.image);
          const progress = service.download_progress == null ? null : Math.round(service.download_progress);
          const key = `${device.id}:${known.image}`;
          const value = `${release}:${service.status}:${progress}`;
          if (writtenInstalls.get(key) === value) continue;
          if (writtenInstalls.size >= 200_000) writtenInstalls.clear();
          writtenInstalls.set(key, value);
          pendingInstalls.set(key, {
            device: device.id,
            image: known.image,
            service: known.service,
            release,
            status: service.status,
            download_progress: progress,
          });
        }
      }
    }
    if (complete) endUnreportedInstalls(device.id, images);
  }

  /**
   * A complete report lists every image the device has: installs of others end (a release the
   * device started downloading and dropped after a rollback must not stay "Downloading" for good).
   */
  function endUnreportedInstalls(device: number, images: number[]) {
    const current = [...new Set(images)].sort((a, b) => a - b);
    const before = reportedImages.get(device);
    if (before && before.join() === current.join()) return;
    for (const image of before ?? []) if (!current.includes(image)) writtenInstalls.delete(`${device}:${image}`);
    if (reportedImages.size >= 200_000) reportedImages.clear();
    reportedImages.set(device, current);
    pendingPrunes.set(device, current);
  }

  async function flushOnce() {
    const fleets = [...pendingFleets];
    pendingFleets.clear();
    await writeOnce();
    if (fleets.length > 0) for (const listener of writtenListeners) listener(fleets);
  }

  /**
   * Writes what is pending. A piece that fails goes back to pending (newer values of the same
   * device first) for the next flush: `written` already holds its values, so a device that
   * reports the same again would otherwise never have it written (a provisioning progress stuck
   * at 35 % after a failed write under load, scripts/bench-scale.ts).
   */
  async function writeOnce() {
    const failures: unknown[] = [];
    const retryOnFailure = async <T>(rows: T[], write: (piece: T[]) => Promise<unknown>, requeue: (row: T) => void) =>
      inPieces(rows, (piece) =>
        write(piece).catch((error: unknown) => {
          failures.push(error);
          for (const row of piece) requeue(row);
        }),
      );
    if (pendingInstalls.size > 0) {
      const installs = [...pendingInstalls.values()];
      pendingInstalls.clear();
      await retryOnFailure(
        installs,
        (piece) => writeImageInstalls(db, piece),
        (install) => {
          const key = `${install.device}:${install.image}`;
          if (!pendingInstalls.has(key)) pendingInstalls.set(key, install);
        },
      );
    }
    if (pendingPrunes.size > 0) {
      const prunes = [...pendingPrunes].map(([device, images]) => ({ device, images }));
      pendingPrunes.clear();
      await retryOnFailure(
        prunes,
        (piece) => endImageInstalls(db, piece),
        ({ device, images }) => {
          if (!pendingPrunes.has(device)) pendingPrunes.set(device, images);
        },
      );
    }
    if (pending.size > 0) {
      const batch = [...pending];
      pending.clear();
      // One statement per set of changed columns: metrics-only reports share one.
      const groups = new Map<string, { columns: Column[]; rows: Record<string, Value>[] }>();
      for (const [id, values] of batch) {
        const columns = (Object.keys(values) as Column[]).sort();
        const key = columns.join(",");
        const group = groups.get(key) ?? { columns, rows: [] };
        group.rows.push({ id, ...values });
        groups.set(key, group);
      }
      for (const { columns, rows } of groups.values()) {
        const set = columns.map((c) => `"${c}" = v."${c}"`).join(", ");
        const types = ["id int", ...columns.map((c) => `"${c}" ${COLUMNS[c]}`)].join(", ");
        // A status or update status that changed may be a webhook event: the same statement
        // compares with the stored values and queues deliveries (DEVICE_EVENTS_SQL).
        const sql =
          columns.includes("status") || columns.includes("update_status")
            ? deviceEventsSql(set, types)
            : `UPDATE "device" d SET ${set} FROM jsonb_to_recordset($1::jsonb) AS v(${types}) WHERE d.id = v.id`;
        await retryOnFailure(
          rows,
          (piece) => db.query(sql, [JSON.stringify(piece)]),
          ({ id, ...values }) => pending.set(Number(id), { ...values, ...pending.get(Number(id)) }),
        );
      }
    }
    if (failures.length > 0) throw failures[0];
  }

  const flush = async () => {
    while (flushing) await flushing;
    flushing = flushOnce().finally(() => (flushing = undefined));
    await flushing;
  };

  const timer =
    options.flushMs === 0 ? undefined : setInterval(() => flush().catch(onError), options.flushMs ?? DEFAULT_FLUSH_MS);
  timer?.unref();

  return {
    /** Keeps the report; the changed fields are written by the next flush. */
    async record(device: { id: number; fleet: number }, report: DeviceReport) {
      const values = columnsOf(report);
      const running = await runningRelease(device.fleet, report);
      if (running !== undefined) values.is_running__release = running;
      const installsBefore = pendingInstalls.size;
      await recordInstalls(device, report);
      const last = written.get(device.id) ?? {};
      const changes = pending.get(device.id) ?? {};
      for (const [column, value] of Object.entries(values) as [Column, Value][]) {
        if (last[column] === value) continue;
        changes[column] = value;
        last[column] = value;
      }
      if ("update_status" in changes) changes.last_update_status_event = new Date(now()).toISOString();
      written.set(device.id, last);
      if (Object.keys(changes).length > 0) pending.set(device.id, changes);
      if (Object.keys(changes).length > 0 || pendingInstalls.size > 0 || pendingPrunes.has(device.id)) {
        pendingFleets.add(device.fleet);
      }
      const mayMoveWave =
        "is_running__release" in changes || "update_status" in changes || pendingInstalls.size > installsBefore;
      if (mayMoveWave && rollingOut.has(device.fleet)) flushSoon();
    },
    /** The fleets with a running rollout now (the rollout engine's tick; replaces the previous set). */
    setRollingOut(fleets: Iterable<number>) {
      rollingOut = new Set(fleets);
    },
    /** Fleets whose rollout just started (here or on another instance). */
    addRollingOut(fleets: Iterable<number>) {
      for (const fleet of fleets) rollingOut.add(fleet);
    },
    isRollingOut: (fleet: number) => rollingOut.has(fleet),
    /** Forgets what was written for a device (e.g. it was moved or deleted). */
    forget(deviceId: number) {
      written.delete(deviceId);
      reportedImages.delete(deviceId);
    },
    /**
     * A user wrote these columns of the device through /v7 (reported-fields.ts): a report waiting
     * for the flush no longer overwrites them, and the device's next report writes every column
     * again, the user's among them (its values are no longer taken as already written).
     */
    userWrote(deviceId: number, columns: readonly string[]) {
      written.delete(deviceId);
      const waiting = pending.get(deviceId);
      if (!waiting) return;
      for (const column of columns) delete waiting[column as Column];
      if (Object.keys(waiting).length === 0) pending.delete(deviceId);
    },
    flush,
    /** Calls `listener` with the fleets of the devices whose changes a flush wrote (phased rollouts judge their waves). */
    onWritten(listener: (fleets: number[]) => void) {
      writtenListeners.push(listener);
    },
    pendingCount: () => pending.size + pendingInstalls.size,
    async close() {
      if (timer) clearInterval(timer);
      clearTimeout(soon);
      await flush();
    },
  };
}

export type StateReports = ReturnType<typeof createStateReports>;
