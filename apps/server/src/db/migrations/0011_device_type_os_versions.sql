-- Device type contracts carry the OS versions available for them (data.osVersions: oldest and
-- newest), read by the fleet type rules in packages/domain/src/fleet-types.ts.
UPDATE "device_type"
SET "contract" = jsonb_set(coalesce("contract", '{}'::jsonb), '{data,osVersions}',
  jsonb_build_object('oldest', CASE WHEN "slug" IN ('raspberrypi5', 'jetson-orin-nano-devkit-nvme') THEN '5.1.20' ELSE '2.83.10' END,
    'newest', '6.0.13'), true)
WHERE "contract" ? 'data';
--> statement-breakpoint
-- The Raspberry Pi v1 / Zero cannot run multicontainer fleet types.
UPDATE "device_type"
SET "contract" = jsonb_set("contract", '{data,supportsMulticontainer}', 'false'::jsonb, true)
WHERE "slug" = 'raspberry-pi' AND "contract" ? 'data';
--> statement-breakpoint
-- A discontinued device type: listed, but no fleet or device can be created for it.
INSERT INTO "device_type" ("slug", "name", "is_of__cpu_architecture", "contract")
SELECT 'artik10', 'Samsung Artik 10', a.id,
  jsonb_build_object('slug', 'artik10', 'name', 'Samsung Artik 10', 'type', 'sw.device-type', 'version', '1',
    'state', 'DISCONTINUED',
    'data', jsonb_build_object('arch', 'armv7hf', 'media', jsonb_build_object('installation', 'sdcard'),
      'osVersions', jsonb_build_object('oldest', '2.0.0', 'newest', '2.31.5')))
FROM "cpu_architecture" a WHERE a.slug = 'armv7hf'
ON CONFLICT ("slug") DO NOTHING;
--> statement-breakpoint
INSERT INTO "device_type_alias" ("device_type", "is_referenced_by__alias")
SELECT id, slug FROM "device_type" WHERE "slug" = 'artik10'
ON CONFLICT ("is_referenced_by__alias") DO NOTHING;
