import type { Queryable } from "../../db/index.ts";
import { managingRelease } from "./catalogue.ts";

/** The service name a device's supervisor runs as (open-balena-api's v3 state). */
export const SUPERVISOR_SERVICE = "balena-supervisor";

/**
 * The supervisor app of a device's target state (docs/device-protocol.md "OS and supervisor
 * updates"): when a supervisor release is set (`should_be_managed_by__release`), an app after
 * the fleet's, keyed by the supervisor fleet's uuid, whose release runs `balena-supervisor`.
 * Empty when none is set: the device keeps the supervisor it runs.
 */
export async function supervisorApp(db: Pick<Queryable, "query">, device: number) {
  const release = await managingRelease(db, device);
  if (!release) return {};
  return {
    [release.fleet_uuid]: {
      id: release.fleet,
      name: release.fleet_slug,
      class: "app",
      is_host: false,
      releases: {
        [release.commit]: {
          id: release.id,
          services: {
            [SUPERVISOR_SERVICE]: {
              image: `${release.fleet_slug}:${release.raw_version}`,
              environment: {},
              labels: { "io.balena.features.supervisor-api": "1", "io.balena.supervisor.version": release.raw_version },
              running: true,
              composition: {},
            },
          },
        },
      },
    },
  };
}
