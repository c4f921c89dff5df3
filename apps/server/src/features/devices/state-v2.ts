import crypto from "node:crypto";
import { z } from "zod";
import type { Queryable } from "../../db/index.ts";
import type { DeviceReport } from "./state-report.ts";

/**
 * The v2 device state (docs/device-protocol.md "balenaOS devices"), for Supervisors before v3 of
 * the state API (up to v12), as balena serves it: `GET /device/v2/{uuid}/state` is the v3 target
 * state reshaped, `PATCH /device/v2/{uuid}/state` is turned into a v3 report.
 */

type ServiceV3 = {
  id: number;
  image_id: number;
  image: string;
  environment: Record<string, string>;
  labels: Record<string, string>;
  running?: boolean;
  composition?: Record<string, unknown>;
};
type ReleaseV3 = { id: number; services: Record<string, ServiceV3>; volumes?: unknown; networks?: unknown };
type AppV3 = { id: number; name: string; releases?: Record<string, ReleaseV3> };
type StateV3 = Record<string, { name: string; config: Record<string, string>; apps: Record<string, AppV3> }>;

/** Config variables balena hands to v2 Supervisors as service labels too (when the label is not set). */
const CONFIG_AS_LABELS: Readonly<Record<string, string>> = {
  RESIN_SUPERVISOR_UPDATE_STRATEGY: "io.resin.update.strategy",
  RESIN_SUPERVISOR_HANDOVER_TIMEOUT: "io.resin.update.handover-timeout",
};

/**
 * `{local: {name, config, apps: {[fleetId]: {name, commit, releaseId, services: {[serviceId]:
 * {...composition, imageId, serviceName, image, running, environment, labels}}, volumes,
 * networks}}}, dependent: {apps: {}, devices: {}}}` from the v3 body of the device's target state.
 * Only the fleet's app: v2 Supervisors know no supervisor or host app in the target state.
 */
export function targetStateV2(v3Body: string, fleetId: number): string {
  const state = JSON.parse(v3Body) as StateV3;
  const [device] = Object.values(state);
  if (!device) throw new Error("state-v2: an empty target state");
  const apps: Record<string, unknown> = {};
  const app = Object.values(device.apps).find((each) => each.id === fleetId);
  if (app) {
    const [entry] = Object.entries(app.releases ?? {});
    if (!entry) {
      apps[String(app.id)] = { name: app.name, services: {}, volumes: {}, networks: {} };
    } else {
      const [commit, release] = entry;
      const services: Record<string, unknown> = {};
      for (const [serviceName, service] of Object.entries(release.services)) {
        const labels = { ...service.labels };
        for (const [name, label] of Object.entries(CONFIG_AS_LABELS)) {
          const value = device.config[name];
          if (value !== undefined && !(label in labels)) labels[label] = value;
        }
        services[String(service.id)] = {
          ...service.composition,
          imageId: service.image_id,
          serviceName,
          image: service.image,
          running: service.running ?? true,
          environment: service.environment,
          labels,
        };
      }
      apps[String(app.id)] = {
        name: app.name,
        commit,
        releaseId: release.id,
        services,
        volumes: release.volumes ?? {},
        networks: release.networks ?? {},
      };
    }
  }
  return JSON.stringify({
    local: { name: device.name, config: device.config, apps },
    dependent: { apps: {}, devices: {} },
  });
}

const etagOf = (body: string) => `"${crypto.createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;

/** The v2 body and ETag of a cached v3 target state, computed once per cache entry. */
export function createTargetStatesV2() {
  const computed = new WeakMap<object, { body: string; etag: string }>();
  return (state: { body: string; fleet: number }) => {
    let v2 = computed.get(state);
    if (!v2) {
      const body = targetStateV2(state.body, state.fleet);
      v2 = { body, etag: etagOf(body) };
      computed.set(state, v2);
    }
    return v2;
  };
}

const text = (max: number) => z.string().max(max);
const id = z.union([
  z.number().int().min(1).max(2_147_483_647),
  z
    .string()
    .regex(/^\d{1,10}$/)
    .transform(Number),
]);

/** What v2 Supervisors send (balena's statePatchV2 fields); unknown fields are dropped. */
export const stateReportV2Body = z.object({
  local: z
    .object({
      status: text(100).nullish(),
      os_version: text(255).nullish(),
      os_variant: text(50).nullish(),
      supervisor_version: text(50).nullish(),
      ip_address: text(1000).nullish(),
      mac_address: text(1000).nullish(),
      api_port: z
        .union([
          z.number().int().min(0).max(65535),
          z
            .string()
            .regex(/^\d{1,5}$/)
            .transform(Number),
        ])
        .nullish(),
      api_secret: z.string().max(255).nullish(),
      cpu_usage: z.number().min(0).max(100).nullish(),
      cpu_temp: z.number().min(-100).max(200).nullish(),
      cpu_id: text(255).nullish(),
      memory_usage: z.number().min(0).max(1e9).nullish(),
      memory_total: z.number().min(0).max(1e9).nullish(),
      storage_usage: z.number().min(0).max(1e9).nullish(),
      storage_total: z.number().min(0).max(1e9).nullish(),
      storage_block_device: text(255).nullish(),
      is_undervolted: z.boolean().nullish(),
      provisioning_progress: z.number().min(0).max(100).nullish(),
      provisioning_state: text(255).nullish(),
      download_progress: z.number().min(0).max(100).nullish(),
      is_on__commit: text(100).nullish(),
      apps: z
        .record(
          z.string().max(200),
          z.object({
            services: z
              .record(
                z.string().max(20),
                z.object({
                  releaseId: id,
                  status: text(100).nullish(),
                  download_progress: z.number().min(0).max(100).nullish(),
                }),
              )
              .refine((r) => Object.keys(r).length <= 100, "at most 100 services")
              .optional(),
          }),
        )
        .refine((r) => Object.keys(r).length <= 10, "at most 10 apps")
        .optional(),
    })
    .optional(),
  dependent: z.unknown().optional(),
});
export type StateReportV2 = z.infer<typeof stateReportV2Body>;

const REPORTED_AS_IS = [
  "status",
  "os_version",
  "os_variant",
  "supervisor_version",
  "ip_address",
  "mac_address",
  "api_port",
  "api_secret",
  "cpu_usage",
  "cpu_temp",
  "cpu_id",
  "memory_usage",
  "memory_total",
  "storage_usage",
  "storage_total",
  "storage_block_device",
  "is_undervolted",
  "provisioning_progress",
  "provisioning_state",
  "download_progress",
] as const;

type Db = Pick<Queryable, "query">;
/** A release of the device's fleet: its commit and its images' service names. */
export type ReleaseImages = { commit: string; services: Map<number, string> };

/** The fleet's releases among `ids`, with the service name of each of their images. */
export async function fleetReleaseImages(db: Db, fleet: number, ids: number[]): Promise<Map<number, ReleaseImages>> {
  const found = new Map<number, ReleaseImages>();
  if (ids.length === 0) return found;
  const { rows } = await db.query<{ id: number; commit: string; image: number | null; service_name: string | null }>(
    `SELECT r.id, r."commit", ri.image, s.service_name FROM "release" r
       LEFT JOIN "release_image" ri ON ri.is_part_of__release = r.id
       LEFT JOIN "image" i ON i.id = ri.image LEFT JOIN "service" s ON s.id = i.is_a_build_of__service
      WHERE r.belongs_to__application = $1 AND r.id = ANY($2::int[])`,
    [fleet, ids],
  );
  for (const row of rows) {
    const release = found.get(Number(row.id)) ?? { commit: row.commit, services: new Map() };
    if (row.image !== null && row.service_name !== null) release.services.set(Number(row.image), row.service_name);
    found.set(Number(row.id), release);
  }
  return found;
}

/**
 * A v2 report as the v3 report it means: the device's fields as they are, `is_on__commit` as
 * the running release, and service statuses keyed by image id and release id as services of
 * the release's commit (images and releases not of the device's fleet are left out). `name` is
 * not taken: a device's name is its users' (and its first boot's PATCH of /v7/device).
 */
export function reportFromV2(
  local: NonNullable<StateReportV2["local"]>,
  fleetUuid: string,
  releases: Map<number, ReleaseImages>,
): DeviceReport {
  const report: DeviceReport = {};
  for (const field of REPORTED_AS_IS) {
    if (local[field] !== undefined) (report as Record<string, unknown>)[field] = local[field];
  }
  const byCommit: NonNullable<NonNullable<DeviceReport["apps"]>[string]["releases"]> = {};
  for (const app of Object.values(local.apps ?? {})) {
    for (const [imageId, service] of Object.entries(app.services ?? {})) {
      const release = releases.get(service.releaseId);
      const name = release?.services.get(Number(imageId));
      if (!release || name === undefined) continue;
      const entry = byCommit[release.commit] ?? { services: {} };
      entry.services = {
        ...entry.services,
        [name]: { status: service.status ?? null, download_progress: service.download_progress ?? null },
      };
      byCommit[release.commit] = entry;
    }
  }
  if (local.is_on__commit !== undefined || local.apps !== undefined) {
    report.apps = {
      [fleetUuid]: {
        ...(local.is_on__commit !== undefined ? { release_uuid: local.is_on__commit } : {}),
        releases: byCommit,
      },
    };
  }
  return report;
}

/** The release ids a v2 report names. */
export const releaseIdsOf = (local: NonNullable<StateReportV2["local"]>) => [
  ...new Set(
    Object.values(local.apps ?? {}).flatMap((app) => Object.values(app.services ?? {}).map((s) => s.releaseId)),
  ),
];
