import { computed, createdAt, editable, field, id, many, pairResource, ref, resource, synonym } from "./dsl.ts";

const semverSql = (r: string) => `(${r}."semver_major" || '.' || ${r}."semver_minor" || '.' || ${r}."semver_patch")`;
/**
 * The version as balena writes it: `major.minor.patch`, then `-` and the prerelease and, for a
 * draft, its `created_at` in ms (`1.2.3-1732847362123`, `1.2.3-beta.1732847362123`: unique per
 * draft until it is finalized), then `+` and the build, the revision (`rev1`, unless the build
 * names it) and the variant. Finalized: `1.2.3`, `1.2.3+rev1`, … The dashboard shows a draft as
 * its semver with a "Draft" chip (apps/web releases/model.ts `versionText`).
 */
export const rawVersionSql = (r: string) => {
  const revised = `(COALESCE(${r}."revision", 0) > 0)`;
  const draftMs = `CASE WHEN NOT ${r}."is_final" THEN floor(extract(epoch FROM ${r}."created_at") * 1000)::bigint::text END`;
  const revisionTag = `CASE WHEN ${revised} AND ('.' || ${r}."semver_build" || '.') NOT LIKE ('%.rev' || ${r}."revision" || '.%') THEN 'rev' || ${r}."revision" END`;
  return `(${semverSql(r)}
    || CASE WHEN ${r}."semver_prerelease" <> '' OR NOT ${r}."is_final"
            THEN '-' || concat_ws('.', NULLIF(${r}."semver_prerelease", ''), ${draftMs}) ELSE '' END
    || CASE WHEN ${r}."semver_build" <> '' OR ${revised} OR ${r}."variant" <> ''
            THEN '+' || concat_ws('.', NULLIF(${r}."semver_build", ''), ${revisionTag}, NULLIF(${r}."variant", '')) ELSE '' END)`;
};

/**
 * balena's data rules of releases, in its words (pinejs answers a broken rule with the rule
 * itself): what a fleet or a device may be pinned to, and one successful release per commit.
 */
export const RELEASE_RULES = {
  fleet:
    'It is necessary that each release that should be running on an application, has a status that is equal to "success" and belongs to the application.',
  device:
    'It is necessary that each release that is pinned to a device, has a status that is equal to "success" and belongs to an application1 that the device belongs to.',
  commit:
    'It is necessary that each application that owns a release1 that has a status that is equal to "success" and has a commit1, owns at most one release2 that has a status that is equal to "success" and has a commit2 that is equal to the commit1.',
} as const;

const releaseImageImage = ref("image", "image", { writable: true, required: true });
const releaseImageRelease = ref("is_part_of__release", "release", { writable: true, required: true });

export const releaseResources = [
  resource({
    name: "release",
    table: "release",
    alternateKeys: [["belongs_to__application", "commit"]],
    rules: { release_app_commit_key: RELEASE_RULES.commit },
    // balena-cli and balena-release write the version as one string (client-releases.ts).
    parameters: { semver: "Text" },
    fields: [
      id,
      createdAt,
      ref("belongs_to__application", "application", { writable: true, required: true }),
      editable("commit", "Text", true),
      editable("composition", "JSON"),
      editable("status", "Text", true),
      editable("source", "Text"),
      editable("build_log", "Text"),
      editable("is_invalidated", "Boolean"),
      editable("invalidation_reason", "Text"),
      editable("start_timestamp", "Date Time"),
      editable("end_timestamp", "Date Time"),
      field("update_timestamp", "Date Time"),
      editable("release_version", "Text"),
      editable("contract", "JSON"),
      editable("is_passing_tests", "Boolean"),
      field("is_finalized_at__date", "Date Time"),
      editable("is_final", "Boolean"),
      editable("phase", "Text"),
      editable("semver_major", "Integer"),
      editable("semver_minor", "Integer"),
      editable("semver_patch", "Integer"),
      editable("semver_prerelease", "Text"),
      editable("semver_build", "Text"),
      editable("variant", "Text"),
      editable("release_track", "Text"),
      field("revision", "Integer"),
      editable("known_issue_list", "Text"),
      editable("note", "Text"),
      ref("is_created_by__user", "user", { writable: true }),
      computed("semver", "Text", semverSql),
      // Seconds the build took (balena's release.duration); none while it runs.
      computed(
        "duration",
        "Integer",
        (r) =>
          `CASE WHEN ${r}."end_timestamp" IS NOT NULL THEN floor(extract(epoch FROM ${r}."end_timestamp" - ${r}."start_timestamp"))::int END`,
      ),
      computed("raw_version", "Text", rawVersionSql),
      computed(
        "version",
        "JSON",
        (r) =>
          `jsonb_build_object('raw', ${rawVersionSql(r)}, 'major', ${r}."semver_major", 'minor', ${r}."semver_minor", 'patch', ${r}."semver_patch", 'prerelease', ${r}."semver_prerelease", 'build', ${r}."semver_build", 'version', ${semverSql(r)})`,
      ),
    ],
    navigations: [
      ...many(["release_tag", "release__has__tag_key"], "release_tag", "release"),
      ...many(["release_asset", "release__has__asset_key"], "release_asset", "release"),
      ...many(
        ["release_image", "contains__image", "image__is_part_of__release"],
        "release_image",
        "is_part_of__release",
      ),
      ...many(["should_be_running_on__device"], "device", "is_pinned_on__release"),
      ...many(["is_running_on__device"], "device", "is_running__release"),
      ...many(["should_manage__device"], "device", "should_be_managed_by__release"),
      ...many(["should_operate__device"], "device", "should_be_operated_by__release"),
      ...many(["should_be_running_on__application"], "application", "should_be_running__release"),
    ],
  }),
  pairResource({
    name: "release_tag",
    aliases: ["release__has__tag_key"],
    table: "release_tag",
    parent: { field: "release", target: "release" },
    key: "tag_key",
  }),
  resource({
    name: "release__has__asset_key",
    aliases: ["release_asset"],
    table: "release_asset",
    alternateKeys: [["release", "asset_key"]],
    fields: [
      id,
      createdAt,
      ref("release", "release", { writable: true, required: true }),
      editable("asset_key", "Text", true),
      editable("asset", "JSON"),
    ],
  }),
  resource({
    name: "image",
    table: "image",
    fields: [
      id,
      createdAt,
      ref("is_a_build_of__service", "service", { writable: true, required: true }),
      synonym("is_a_build_of__application__has__service_name", ref("is_a_build_of__service", "service")),
      editable("start_timestamp", "Date Time"),
      editable("end_timestamp", "Date Time"),
      editable("push_timestamp", "Date Time"),
      editable("dockerfile", "Text"),
      editable("image_size", "Big Integer"),
      // Chosen by the server with a registry, else given or named after the compose file (client-releases.ts).
      editable("is_stored_at__image_location", "Text"),
      editable("project_type", "Text"),
      editable("error_message", "Text"),
      // Long: balena answers it only when it is selected.
      { ...editable("build_log", "Text"), selectByDefault: false },
      editable("status", "Text", true),
      editable("content_hash", "Text"),
      editable("contract", "JSON"),
    ],
    navigations: [
      ...many(["release_image", "image__is_part_of__release", "is_part_of__release"], "release_image", "image"),
      ...many(["image_install", "is_installed_on__device"], "image_install", "installs__image"),
    ],
  }),
  resource({
    name: "image__is_part_of__release",
    aliases: ["release_image"],
    table: "release_image",
    alternateKeys: [["image", "is_part_of__release"]],
    fields: [
      id,
      createdAt,
      releaseImageImage,
      synonym("contains__image", releaseImageImage),
      releaseImageRelease,
      synonym("release", releaseImageRelease),
    ],
    navigations: [
      ...many(["image_label", "image__is_part_of__release__has__label_name"], "image_label", "release_image"),
      ...many(
        ["image_environment_variable", "image__is_part_of__release__has__name"],
        "image_environment_variable",
        "release_image",
      ),
    ],
  }),
  pairResource({
    name: "image__is_part_of__release__has__label_name",
    aliases: ["image_label"],
    table: "image_label",
    parent: { field: "release_image", target: "release_image", synonyms: ["image__is_part_of__release"] },
    key: "label_name",
  }),
  pairResource({
    name: "image__is_part_of__release__has__name",
    aliases: ["image_environment_variable"],
    table: "image_environment_variable",
    parent: { field: "release_image", target: "release_image", synonyms: ["image__is_part_of__release"] },
    key: "name",
  }),
];
