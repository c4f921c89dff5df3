ALTER TABLE "device" ADD COLUMN "should_be_operated_by__release" integer;--> statement-breakpoint
ALTER TABLE "device" ADD CONSTRAINT "device_should_be_operated_by__release_release_id_fk" FOREIGN KEY ("should_be_operated_by__release") REFERENCES "public"."release"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
-- OS and supervisor updates (issue #10): the public catalogue of host OS and supervisor releases,
-- owned by the system organization `balena_os` (no members: only the server writes it; every
-- signed-in user reads its public fleets, see features/data-api/permissions.ts).
INSERT INTO "organization" ("name", "handle") VALUES ('balenaOS', 'balena_os') ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- The fleets: per device type a host-OS fleet `balena_os/<slug>` (none for odroid-xu4: a device
-- type without OS releases), ESR host-OS fleets for three types, and per CPU architecture a
-- supervisor fleet `balena_os/<arch>-supervisor`. Each application is an actor.
CREATE TEMPORARY TABLE "os_catalogue_fleet" AS
SELECT dt.slug AS app_name, 'balena_os/' || dt.slug AS slug, dt.id AS device_type, true AS is_host, 'default' AS kind
  FROM "device_type" dt WHERE dt.slug <> 'odroid-xu4'
UNION ALL
SELECT dt.slug || '-esr', 'balena_os/' || dt.slug || '-esr', dt.id, true, 'esr'
  FROM "device_type" dt WHERE dt.slug IN ('raspberrypi4-64', 'intel-nuc', 'generic-amd64')
UNION ALL
SELECT s.arch || '-supervisor', 'balena_os/' || s.arch || '-supervisor', dt.id, false, 'supervisor'
  FROM (VALUES ('rpi', 'raspberry-pi'), ('armv7hf', 'raspberrypi3'), ('aarch64', 'generic-aarch64'), ('amd64', 'generic-amd64'))
    AS s(arch, device_type)
  JOIN "device_type" dt ON dt.slug = s.device_type;
--> statement-breakpoint
ALTER TABLE "os_catalogue_fleet" ADD COLUMN "actor" integer;
--> statement-breakpoint
UPDATE "os_catalogue_fleet" f SET "actor" = a.id
  FROM (SELECT slug, nextval(pg_get_serial_sequence('"actor"', 'id'))::int AS id FROM "os_catalogue_fleet") a
 WHERE a.slug = f.slug;
--> statement-breakpoint
INSERT INTO "actor" ("id") OVERRIDING SYSTEM VALUE SELECT "actor" FROM "os_catalogue_fleet";
--> statement-breakpoint
INSERT INTO "application" ("actor", "uuid", "is_of__class", "organization", "app_name", "slug", "is_for__device_type",
  "application_type", "should_track_latest_release", "is_host", "is_public")
SELECT f.actor, md5('flotilla-os-catalogue/' || f.slug), 'fleet', o.id, f.app_name, f.slug, f.device_type, t.id, true,
  f.is_host, true
  FROM "os_catalogue_fleet" f
  JOIN "organization" o ON o.handle = 'balena_os'
  JOIN "application_type" t ON t.slug = 'microservices';
--> statement-breakpoint
INSERT INTO "application_tag" ("application", "tag_key", "value")
SELECT a.id, t.tag_key, t.value FROM "application" a
  JOIN "os_catalogue_fleet" f ON f.slug = a.slug AND f.kind = 'esr'
  CROSS JOIN (VALUES ('release-policy', 'esr'), ('esr-current', '2025.4'), ('esr-sunset', '2024.10')) AS t(tag_key, value);
--> statement-breakpoint
-- The releases: final successful OS versions (the simulator runs 6.1.0, so 6.2.4 is newer), a
-- failed build that lists nowhere, ESR versions with the default-line version they are based on,
-- and supervisor versions (the agent reports 16.7.0) with a 0.0.0 and a failed one that are excluded.
CREATE TEMPORARY TABLE "os_catalogue_release" AS
SELECT f.slug, v.version, 'success' AS status, v.phase, NULL::text AS based_on
  FROM "os_catalogue_fleet" f
  JOIN "device_type" dt ON dt.id = f.device_type
  CROSS JOIN (VALUES ('2.83.10', 'end-of-life'), ('2.115.18', NULL), ('5.1.20', NULL), ('5.3.1', NULL), ('6.0.13', NULL),
    ('6.1.0', NULL), ('6.2.4', 'current')) AS v(version, phase)
 WHERE f.kind = 'default' AND dt.slug <> 'artik10'
   AND (v.version <> '2.83.10' OR dt.slug NOT IN ('raspberrypi5', 'jetson-orin-nano-devkit-nvme'))
   AND (v.version NOT IN ('2.115.18', '5.1.20') OR (v.version = '5.1.20') = (dt.slug IN ('raspberrypi5', 'jetson-orin-nano-devkit-nvme')))
UNION ALL SELECT 'balena_os/artik10', '2.31.5', 'success', 'end-of-life', NULL
UNION ALL SELECT 'balena_os/raspberrypi4-64', '6.3.0', 'failed', NULL, NULL
UNION ALL
SELECT f.slug, v.version, 'success', NULL, v.based_on FROM "os_catalogue_fleet" f
  CROSS JOIN (VALUES ('2024.10.2', '5.3.1'), ('2025.4.1', '6.2.4')) AS v(version, based_on)
 WHERE f.kind = 'esr'
UNION ALL
SELECT f.slug, v.version, v.status, NULL, NULL FROM "os_catalogue_fleet" f
  CROSS JOIN (VALUES ('0.0.0', 'success'), ('16.7.0', 'success'), ('16.8.2', 'success'), ('17.0.1', 'success'),
    ('17.1.0', 'failed')) AS v(version, status)
 WHERE f.kind = 'supervisor';
--> statement-breakpoint
INSERT INTO "release" ("belongs_to__application", "commit", "status", "phase", "source", "end_timestamp", "is_final",
  "is_finalized_at__date", "semver_major", "semver_minor", "semver_patch", "release_version")
SELECT a.id, md5('flotilla-os-catalogue/' || r.slug || '/' || r.version), r.status, r.phase, 'cloud', now(),
  r.status = 'success', CASE WHEN r.status = 'success' THEN now() END,
  split_part(r.version, '.', 1)::int, split_part(r.version, '.', 2)::int, split_part(r.version, '.', 3)::int, r.version
  FROM "os_catalogue_release" r JOIN "application" a ON a.slug = r.slug;
--> statement-breakpoint
INSERT INTO "release_tag" ("release", "tag_key", "value")
SELECT rel.id, 'meta-balena-base', r.based_on FROM "os_catalogue_release" r
  JOIN "application" a ON a.slug = r.slug
  JOIN "release" rel ON rel.belongs_to__application = a.id AND rel.commit = md5('flotilla-os-catalogue/' || r.slug || '/' || r.version)
 WHERE r.based_on IS NOT NULL;
--> statement-breakpoint
DROP TABLE "os_catalogue_release";
--> statement-breakpoint
DROP TABLE "os_catalogue_fleet";
--> statement-breakpoint
-- The device types' OS version range (0011) follows the catalogue: the newest is now 6.2.4.
UPDATE "device_type" SET "contract" = jsonb_set("contract", '{data,osVersions,newest}', '"6.2.4"'::jsonb, true)
 WHERE "contract" ? 'data' AND "contract"->'data' ? 'osVersions' AND "slug" NOT IN ('artik10', 'odroid-xu4');
--> statement-breakpoint
UPDATE "device_type" SET "contract" = "contract" #- '{data,osVersions}' WHERE "slug" = 'odroid-xu4';
