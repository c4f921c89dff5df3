import { BUILD_TIMEOUT_MS, RELEASE_TEXTS } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { rawVersionSql } from "../../model/releases.ts";
import type { ReleaseMove } from "../rollouts/start.ts";
import { enqueueReleaseEvents, releaseEventOf } from "../webhooks/events.ts";
import type { ServiceSpec } from "./project.ts";

/** The release builder's and rollout's SQL (docs/releases.md). */

type Db = Pick<Queryable, "query">;

export type FleetToBuild = { id: number; app_name: string; handle: string };

/** A fleet by id, or by its organization's handle and its name (case-insensitive, as slugs are). */
export async function findFleet(db: Db, app: string, owner: string | undefined): Promise<FleetToBuild | undefined> {
  const byId = /^\d{1,9}$/.test(app) && owner === undefined;
  const { rows } = await db.query<FleetToBuild>(
    `SELECT a.id, a.app_name, o.handle FROM "application" a JOIN "organization" o ON o.id = a.organization
      WHERE ${byId ? "a.id = $1::int" : "lower(o.handle) = lower($2) AND lower(a.app_name) = lower($1)"}`,
    byId ? [app] : [app, owner ?? ""],
  );
  return rows[0];
}

export async function createRelease(
  db: Db,
  values: { fleet: number; commit: string; user: number | undefined; note: string | undefined; source: string },
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO "release" (belongs_to__application, commit, status, source, build_log, is_created_by__user, note)
     VALUES ($1, $2, 'running', $3, '', $4, $5) RETURNING id`,
    [values.fleet, values.commit, values.source, values.user ?? null, values.note ?? null],
  );
  return Number(rows[0]?.id);
}

/** Appends build-log lines and marks the release as alive (a silent running build times out). */
export async function appendReleaseLog(db: Db, release: number, text: string, image?: number) {
  await db.query(
    `UPDATE "release" SET build_log = COALESCE(build_log, '') || $2, update_timestamp = now() WHERE id = $1`,
    [release, text],
  );
  if (image !== undefined) {
    await db.query(`UPDATE "image" SET build_log = COALESCE(build_log, '') || $2 WHERE id = $1`, [image, text]);
  }
}

/** Marks a running build as alive (a long, silent build step is progress too). */
export async function touchRelease(db: Db, release: number) {
  await db.query(`UPDATE "release" SET update_timestamp = now() WHERE id = $1 AND status = 'running'`, [release]);
}

/**
 * Ends builds that made no progress for BUILD_TIMEOUT_MS (a server that died mid-build, a client
 * that created a running release and went away): status timeout, with the reason in the log.
 * A build that later finishes still records its own outcome.
 */
export async function closeStalledBuilds(db: Db): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `UPDATE "release" SET status = 'timeout', end_timestamp = now(), update_timestamp = now(),
            build_log = COALESCE(build_log, '') || $2
      WHERE status = 'running'
        AND COALESCE(update_timestamp, start_timestamp, created_at) < now() - make_interval(secs => $1)
      RETURNING id`,
    [BUILD_TIMEOUT_MS / 1000, `${RELEASE_TEXTS.build_timed_out}\n`],
  );
  return rows.map((row) => Number(row.id));
}

/** The service (once per fleet and name) and a running image of it in the release; returns the image id. */
export async function createReleaseImage(
  db: Db,
  values: { fleet: number; release: number; service: ServiceSpec; location: string; dockerfile: string | undefined },
): Promise<number> {
  const { rows } = await db.query<{ image: number }>(
    `WITH existing AS (SELECT id FROM "service" WHERE application = $1 AND service_name = $2),
          created AS (INSERT INTO "service" (application, service_name) SELECT $1, $2
                       WHERE NOT EXISTS (SELECT 1 FROM existing) RETURNING id),
          s AS (SELECT id FROM existing UNION ALL SELECT id FROM created),
          i AS (INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status, dockerfile, build_log, project_type)
                SELECT s.id, $3, 'running', $4, '', $5 FROM s RETURNING id),
          ri AS (INSERT INTO "release_image" (image, is_part_of__release) SELECT i.id, $6 FROM i RETURNING id),
          labels AS (INSERT INTO "image_label" (release_image, label_name, value)
                     SELECT ri.id, l.key, l.value FROM ri, jsonb_each_text($7::jsonb) l),
          env AS (INSERT INTO "image_environment_variable" (release_image, name, value)
                  SELECT ri.id, e.key, e.value FROM ri, jsonb_each_text($8::jsonb) e)
     SELECT i.id AS image FROM i`,
    [
      values.fleet,
      values.service.name,
      values.location,
      values.dockerfile ?? null,
      values.service.build ? "Dockerfile" : "prebuilt",
      values.release,
      JSON.stringify(values.service.labels),
      JSON.stringify(values.service.environment),
    ],
  );
  return Number(rows[0]?.image);
}

export async function finishImage(
  db: Db,
  image: number,
  values: { status: "success" | "failed" | "cancelled"; error?: string; size?: number; contentHash?: string },
) {
  await db.query(
    `UPDATE "image" SET status = $2, error_message = $3, image_size = COALESCE($4, image_size), end_timestamp = now(),
            content_hash = COALESCE($5, content_hash), push_timestamp = CASE WHEN $2 = 'success' THEN now() END
      WHERE id = $1`,
    [image, values.status, values.error ?? null, values.size ?? null, values.contentHash ?? null],
  );
}

export type ReleaseOutcome = {
  status: "success" | "failed" | "error" | "cancelled";
  composition: Record<string, unknown> | undefined;
  version: { major: number; minor: number; patch: number; prerelease: string } | undefined;
  final: boolean;
};

/** Ends the build; a successful final release gets its revision among the fleet's final releases of the same version. */
export async function finishRelease(
  db: Db,
  release: number,
  outcome: ReleaseOutcome,
): Promise<{ raw_version: string }> {
  const version = outcome.version ?? { major: 0, minor: 0, patch: 0, prerelease: "" };
  const final = outcome.status === "success" && outcome.final;
  await db.query(
    `UPDATE "release" SET status = $2, composition = COALESCE($3::jsonb, composition), semver_major = $4,
            semver_minor = $5, semver_patch = $6, semver_prerelease = $7, end_timestamp = now(), update_timestamp = now(),
            is_final = $8, is_finalized_at__date = CASE WHEN $8 THEN now() END
      WHERE id = $1`,
    [
      release,
      outcome.status,
      outcome.composition === undefined ? null : JSON.stringify(outcome.composition),
      version.major,
      version.minor,
      version.patch,
      version.prerelease,
      final,
    ],
  );
  if (final) await assignRevisions(db, [release]);
  const event = releaseEventOf(outcome.status);
  if (event) await enqueueReleaseEvents(db, [release], event);
  const { rows } = await db.query<{ raw_version: string }>(
    `SELECT ${rawVersionSql("r")} AS raw_version FROM "release" AS r WHERE r.id = $1`,
    [release],
  );
  return { raw_version: rows[0]?.raw_version ?? "0.0.0" };
}

/** The fleet's successful release of a commit, if there is one (a commit has at most one: migration 0030). */
export async function successfulReleaseOfCommit(
  db: Db,
  fleet: number,
  commit: string,
): Promise<{ id: number; raw_version: string } | undefined> {
  const { rows } = await db.query<{ id: number; raw_version: string }>(
    `SELECT id, semver_major || '.' || semver_minor || '.' || semver_patch
            || CASE WHEN semver_prerelease <> '' THEN '-' || semver_prerelease ELSE '' END
            || CASE WHEN revision > 0 THEN '+rev' || revision ELSE '' END AS raw_version
       FROM "release" WHERE belongs_to__application = $1 AND commit = $2 AND status = 'success'`,
    [fleet, commit],
  );
  const row = rows[0];
  return row && { id: Number(row.id), raw_version: row.raw_version };
}

/** Final releases number their repeats of a version: the first has none, the next `+rev1`, … */
export async function assignRevisions(db: Db, releases: number[]) {
  await db.query(
    `UPDATE "release" r SET revision = (
        SELECT count(*)::int FROM "release" o
         WHERE o.belongs_to__application = r.belongs_to__application AND o.is_final AND o.id <> r.id
           AND o.revision IS NOT NULL
           AND (o.semver_major, o.semver_minor, o.semver_patch, o.semver_prerelease)
             = (r.semver_major, r.semver_minor, r.semver_patch, r.semver_prerelease))
      WHERE r.id = ANY($1::int[]) AND r.is_final AND r.revision IS NULL`,
    [releases],
  );
}

/**
 * Fleets that track the latest release move to their newest successful, final, valid one
 * (docs/releases.md "Rollout"). Returns each move: the fleet, the release it left and the new one.
 */
export async function followLatestRelease(db: Db, fleets: number[]): Promise<ReleaseMove[]> {
  if (fleets.length === 0) return [];
  const { rows } = await db.query<{ fleet: number; from: number | null; to: number }>(
    `UPDATE "application" a SET should_be_running__release = latest.id
       FROM (SELECT DISTINCT ON (r.belongs_to__application) r.belongs_to__application AS fleet, r.id
               FROM "release" r
              WHERE r.belongs_to__application = ANY($1::int[]) AND r.status = 'success' AND r.is_final
                AND NOT r.is_invalidated
              ORDER BY r.belongs_to__application, r.created_at DESC, r.id DESC) latest,
            "application" old
      WHERE a.id = latest.fleet AND old.id = a.id AND a.should_track_latest_release
        AND a.should_be_running__release IS DISTINCT FROM latest.id
     RETURNING a.id AS fleet, old.should_be_running__release AS "from", latest.id AS "to"`,
    [fleets],
  );
  return rows.map((row) => ({
    fleet: Number(row.fleet),
    from: row.from === null ? null : Number(row.from),
    to: Number(row.to),
  }));
}

/** The devices of these fleets that follow the fleet's release (not pinned): told to update at once. */
export async function unpinnedDevicesOf(db: Db, fleets: number[]): Promise<number[]> {
  if (fleets.length === 0) return [];
  const { rows } = await db.query<{ id: number }>(
    `SELECT id FROM "device" WHERE belongs_to__application = ANY($1::int[]) AND is_pinned_on__release IS NULL
      ORDER BY id LIMIT 1000`,
    [fleets],
  );
  return rows.map((row) => Number(row.id));
}

/** A fleet's build variables (balena's `build_environment_variable`), by name. */
export async function fleetBuildVariables(db: Db, fleet: number): Promise<Record<string, string>> {
  const { rows } = await db.query<{ name: string; value: string }>(
    `SELECT name, value FROM "build_environment_variable" WHERE application = $1 ORDER BY name`,
    [fleet],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.value]));
}

export type StoredAsset = { id: number; fleet: number; asset: { filename?: string; content_type?: string } | null };

/** A release asset with its fleet (for links and uploads, which check rights themselves). */
export async function findReleaseAsset(db: Db, id: number): Promise<StoredAsset | undefined> {
  const { rows } = await db.query<StoredAsset>(
    `SELECT ra.id, r.belongs_to__application AS fleet, ra.asset
       FROM "release_asset" ra JOIN "release" r ON r.id = ra.release WHERE ra.id = $1`,
    [id],
  );
  const row = rows[0];
  return row && { ...row, id: Number(row.id), fleet: Number(row.fleet) };
}

/**
 * The image a compose file names for a service without a build (`image: nginx:alpine`): from the
 * release's composition when given, else from the newest release of the service's fleet that
 * names the service (balena deploy creates the release, then the service and its image). A
 * service the composition builds (`build:`) names no image here: it is the client's to push.
 */
export async function composedImageOfService(db: Db, service: number, release?: number): Promise<string | undefined> {
  const { rows } = await db.query<{ image: string }>(
    `SELECT r.composition -> 'services' -> s.service_name ->> 'image' AS image
       FROM "service" s JOIN "release" r ON r.belongs_to__application = s.application
      WHERE s.id = $1 AND ($2::int IS NULL OR r.id = $2)
        AND jsonb_typeof(r.composition -> 'services' -> s.service_name -> 'image') = 'string'
        AND NOT (r.composition -> 'services' -> s.service_name ? 'build')
      ORDER BY (r.status = 'running') DESC, r.created_at DESC, r.id DESC LIMIT 1`,
    [service, release ?? null],
  );
  return rows[0]?.image || undefined;
}

/** Names an image's location when it has none yet (a data-API image of a server without a registry). */
export async function nameImageLocation(db: Db, image: number, location: string) {
  await db.query(
    `UPDATE "image" SET is_stored_at__image_location = $2 WHERE id = $1 AND is_stored_at__image_location = ''`,
    [image, location],
  );
}

/** The image and release of release_image rows whose image has no location yet. */
export async function unnamedReleaseImages(db: Db, releaseImages: readonly number[]) {
  const { rows } = await db.query<{ image: number; release: number; service: number }>(
    `SELECT ri.image, ri.is_part_of__release AS release, i.is_a_build_of__service AS service
       FROM "release_image" ri JOIN "image" i ON i.id = ri.image
      WHERE ri.id = ANY($1::int[]) AND i.is_stored_at__image_location = ''`,
    [[...releaseImages]],
  );
  return rows;
}
