import { sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { user } from "./accounts.ts";
import { createdAt, date, id, optional, ownedBy, shortText } from "./columns.ts";
import { application, pairs, service } from "./fleets.ts";

/**
 * A release of a fleet. `semver`, `raw_version`, `version` and `is_final` are computed by the
 * model from the semver parts and `is_finalized_at__date`.
 */
export const release = pgTable(
  "release",
  {
    id: id(),
    created_at: createdAt(),
    belongs_to__application: ownedBy((): AnyPgColumn => application.id),
    commit: shortText(),
    composition: jsonb().notNull().default({}),
    status: shortText(),
    source: text().notNull().default("cloud"),
    build_log: text(),
    is_invalidated: boolean().notNull().default(false),
    invalidation_reason: text(),
    start_timestamp: date().notNull().defaultNow(),
    end_timestamp: date(),
    update_timestamp: date().notNull().defaultNow(),
    release_version: text(),
    contract: jsonb(),
    is_passing_tests: boolean().notNull().default(true),
    is_finalized_at__date: date(),
    phase: text(),
    release_track: text(),
    is_final: boolean().notNull().default(false),
    semver_major: integer().notNull().default(0),
    semver_minor: integer().notNull().default(0),
    semver_patch: integer().notNull().default(0),
    semver_prerelease: text().notNull().default(""),
    semver_build: text().notNull().default(""),
    variant: text().notNull().default(""),
    revision: integer(),
    known_issue_list: text(),
    note: text(),
    is_created_by__user: integer().references(() => user.id, { onDelete: "set null" }),
  },
  (t) => [
    // Unique among successful releases only (migration 0030), as on balena.
    uniqueIndex("release_app_commit_key").on(t.belongs_to__application, t.commit).where(sql`${t.status} = 'success'`),
    index("release_app_commit_idx").on(t.belongs_to__application, t.commit),
    check(
      "release_status_check",
      sql`${t.status} IN ('cancelled', 'error', 'failed', 'interrupted', 'local', 'running', 'success', 'timeout')`,
    ),
    check("release_phase_check", sql`${t.phase} IS NULL OR ${t.phase} IN ('next', 'current', 'sunset', 'end-of-life')`),
  ],
);

export const release_tag = pairs("release_tag", "release", () => release.id, "tag_key");

export const release_asset = pgTable(
  "release_asset",
  {
    id: id(),
    created_at: createdAt(),
    release: ownedBy(() => release.id),
    asset_key: shortText(),
    /** A WebResource: {href, filename, content_type, size}. */
    asset: jsonb(),
  },
  (t) => [uniqueIndex("release_asset_key").on(t.release, t.asset_key)],
);

/** A built (or prebuilt) image of one service. */
export const image = pgTable("image", {
  id: id(),
  created_at: createdAt(),
  is_a_build_of__service: ownedBy(() => service.id),
  start_timestamp: date().notNull().defaultNow(),
  end_timestamp: date(),
  push_timestamp: date(),
  dockerfile: text(),
  image_size: bigint({ mode: "number" }),
  is_stored_at__image_location: shortText(),
  project_type: text(),
  error_message: text(),
  build_log: text(),
  status: shortText(),
  content_hash: text(),
  contract: jsonb(),
});

/**
 * A registry repository the server named for an image (migration 0028): its fleet owns it for
 * good, and the name is never given again, even after the image or the fleet is deleted.
 */
export const registry_repository = pgTable("registry_repository", {
  name: text().primaryKey(),
  created_at: createdAt(),
  fleet: optional(() => application.id),
  image: optional(() => image.id),
});

/** `image__is_part_of__release`. */
export const release_image = pgTable(
  "release_image",
  {
    id: id(),
    created_at: createdAt(),
    image: ownedBy(() => image.id),
    is_part_of__release: ownedBy(() => release.id),
  },
  (t) => [uniqueIndex("release_image_key").on(t.image, t.is_part_of__release)],
);

export const image_label = pairs("image_label", "release_image", () => release_image.id, "label_name");
export const image_environment_variable = pairs(
  "image_environment_variable",
  "release_image",
  () => release_image.id,
  "name",
);
