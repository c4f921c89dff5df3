import crypto from "node:crypto";
import type { Queryable } from "../../db/index.ts";
import { supervisorApp } from "../os-updates/target-state.ts";
import {
  configVariables,
  environmentVariables,
  type FleetStateFacts,
  releaseFacts,
  releaseServices,
  type TargetStateFacts,
  targetStateFacts,
} from "./queries.ts";
import type { SharedTargetStates } from "./shared-target-states.ts";

/**
 * Target state (docs/device-protocol.md "Target state"): what a device should run, cached per
 * device with its ETag so a poll that finds nothing new costs no database read (DESIGN §8).
 * Writes that change a target state bump a change number for the device, its fleet, or
 * everything (releases, images); an entry computed before the last change is recomputed. With
 * Redis, a state another process built since the change is taken from there instead
 * (shared-target-states.ts).
 */

export const DEFAULT_POLL_INTERVAL_MS = 60_000;
const POLL_INTERVAL_VARS = ["BALENA_SUPERVISOR_POLL_INTERVAL", "RESIN_SUPERVISOR_POLL_INTERVAL"];
/** Bound on cached devices; the oldest entries go first. */
const MAX_ENTRIES = 100_000;

export type TargetState = {
  deviceId: number;
  fleet: number;
  etag: string;
  body: string;
  pollIntervalMs: number;
};

export type Invalidation = { devices?: number[]; fleets?: number[]; all?: boolean };

type Entry = TargetState & { computedAt: number };

type Db = Pick<Queryable, "query">;

export function createTargetStates(db: Db, shared?: SharedTargetStates) {
  let sequence = 0;
  let everythingChangedAt = 0;
  const fleetChangedAt = new Map<number, number>();
  const deviceChangedAt = new Map<number, number>();
  const entries = new Map<string, Entry>();

  const isFresh = (entry: Entry) =>
    everythingChangedAt <= entry.computedAt &&
    (fleetChangedAt.get(entry.fleet) ?? 0) <= entry.computedAt &&
    (deviceChangedAt.get(entry.deviceId) ?? 0) <= entry.computedAt;

  return {
    /** The device's target state, from the cache when nothing changed since; undefined for an unknown uuid. */
    async get(uuid: string): Promise<TargetState | undefined> {
      const cached = entries.get(uuid);
      if (cached && isFresh(cached)) return cached;
      // Changes numbered after this point (even during the reads below) make the entry stale.
      const computedAt = sequence;
      let built: TargetState | undefined;
      if (shared) {
        const found = await shared.find(uuid);
        if ("state" in found) built = found.state;
        else {
          built = await buildTargetState(db, uuid);
          if (built && found.stamp !== undefined) shared.share(uuid, built, found.stamp);
        }
      } else built = await buildTargetState(db, uuid);
      if (!built) {
        entries.delete(uuid);
        return undefined;
      }
      const entry = { ...built, computedAt };
      entries.delete(uuid);
      if (entries.size >= MAX_ENTRIES) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(uuid, entry);
      return entry;
    },

    /**
     * After a change this process committed: drops what it touches here and numbers it for the
     * other processes' message (see shared-target-states.ts; undefined without Redis).
     */
    invalidate(change: Invalidation): Promise<number | undefined> {
      dropLocally(change);
      return shared ? shared.number(change) : Promise.resolve(undefined);
    },
    /** Another process's change, with the number it got (its message). */
    received(change: Invalidation, number: unknown) {
      dropLocally(change);
      shared?.received(change, number);
    },
  };

  function dropLocally({ devices = [], fleets = [], all = false }: Invalidation) {
    sequence += 1;
    if (all) everythingChangedAt = sequence;
    for (const fleet of fleets) fleetChangedAt.set(fleet, sequence);
    for (const device of devices) deviceChangedAt.set(device, sequence);
  }
}

export type TargetStates = ReturnType<typeof createTargetStates>;

/** The poll interval a config asks for (ms); the default when unset or not a sane number. */
export function pollIntervalOf(config: Record<string, string>): number {
  for (const name of POLL_INTERVAL_VARS) {
    const value = Number(config[name]);
    if (config[name] !== undefined && Number.isFinite(value) && value >= 1000) return value;
  }
  return DEFAULT_POLL_INTERVAL_MS;
}

async function buildTargetState(db: Db, uuid: string): Promise<TargetState | undefined> {
  const facts = await targetStateFacts(db, uuid);
  if (!facts) return undefined;
  const config: Record<string, string> = { BALENA_SUPERVISOR_POLL_INTERVAL: String(DEFAULT_POLL_INTERVAL_MS) };
  for (const { name, value } of await configVariables(db, facts.fleet, facts.id)) config[name] = value;
  const state = {
    [facts.uuid]: {
      name: facts.device_name,
      config,
      apps: {
        [facts.fleet_uuid]: {
          id: facts.fleet,
          name: facts.app_name,
          class: facts.is_of__class,
          releases: facts.release === null ? {} : await releasesOf(db, facts),
        },
        ...(await supervisorApp(db, facts.id)),
      },
    },
  };
  const body = JSON.stringify(state);
  return {
    deviceId: facts.id,
    fleet: facts.fleet,
    body,
    etag: `"${crypto.createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`,
    pollIntervalMs: pollIntervalOf(config),
  };
}

/** Row ids start at 1: the fleet's state asks the per-device queries for no device's values. */
const NO_DEVICE = 0;

/**
 * A fleet's default state (balena's `GET /device/v3/fleet/{uuid}/state`): what a new device of
 * the fleet would run, with the fleet's variables only, keyed by the fleet's uuid.
 */
export async function buildFleetState(db: Db, fleet: FleetStateFacts) {
  const config: Record<string, string> = {};
  for (const { name, value } of await configVariables(db, fleet.id, NO_DEVICE)) config[name] = value;
  return {
    [fleet.uuid]: {
      name: fleet.app_name,
      config,
      apps: {
        [fleet.uuid]: {
          id: fleet.id,
          name: fleet.app_name,
          is_host: fleet.is_host,
          class: fleet.is_of__class,
          ...(fleet.release === null
            ? {}
            : { releases: await releasesOf(db, { fleet: fleet.id, id: NO_DEVICE, release: fleet.release }) }),
        },
      },
    },
  };
}

type Composition = { services?: Record<string, unknown>; volumes?: unknown; networks?: unknown };

/**
 * A service's compose settings as a device gets them: without what only the builder reads
 * (`build`) and compose extension fields (`x-…`), which balena's Supervisor would log as
 * unknown on every apply. Everything else is the compose file's, as balena forwards it.
 */
export function forTheDevice(service: unknown): Record<string, unknown> {
  if (service === null || typeof service !== "object" || Array.isArray(service)) return {};
  return Object.fromEntries(
    Object.entries(service as Record<string, unknown>).filter(([key]) => key !== "build" && !key.startsWith("x-")),
  );
}

async function releasesOf(db: Db, facts: Pick<TargetStateFacts, "fleet" | "id" | "release">) {
  const release = facts.release === null ? undefined : await releaseFacts(db, facts.release);
  if (!release) return {};
  const composition = (release.composition ?? {}) as Composition;
  const fleetEnvironment: Record<string, string> = {};
  const deviceEnvironment: Record<string, string> = {};
  for (const { name, value, level } of await environmentVariables(db, facts.fleet, facts.id)) {
    (level === "fleet" ? fleetEnvironment : deviceEnvironment)[name] = value;
  }
  const services: Record<string, unknown> = {};
  for (const service of await releaseServices(db, release.id, facts.id)) {
    services[service.service_name] = {
      id: service.service_id,
      image_id: service.image_id,
      image: service.image ?? "",
      // Precedence (docs/device-protocol.md): image < fleet < fleet-service < device < device-service.
      environment: {
        ...service.image_environment,
        ...fleetEnvironment,
        ...service.environment,
        ...deviceEnvironment,
        ...service.device_environment,
      },
      labels: service.labels ?? {},
      running: true,
      composition: forTheDevice(composition.services?.[service.service_name]),
    };
  }
  return {
    [release.commit]: {
      id: release.id,
      services,
      volumes: composition.volumes ?? {},
      networks: composition.networks ?? {},
    },
  };
}
