-- balena-cli and balena-sdk compatibility (issue #22): device types as balena's catalogue has
-- them. More of its slugs, the aliases the SDK resolves (`raspberrypi` → `raspberry-pi`), and the
-- contract fields the SDK's install instructions are computed from (data.media.defaultBoot,
-- flashProtocol, partials), so deviceType.getInstructions and getInstallMethod answer.
INSERT INTO "device_type" ("slug", "name", "is_of__cpu_architecture", "belongs_to__device_family", "contract")
SELECT d.slug, d.name, a.id, f.id,
  jsonb_build_object('slug', d.slug, 'name', d.name, 'type', 'sw.device-type', 'version', '1',
    'data', jsonb_build_object('arch', d.arch, 'media', jsonb_build_object('installation', d.media),
      'osVersions', jsonb_build_object('oldest', '2.83.10', 'newest', '6.0.13')))
FROM (VALUES
  ('raspberry-pi2', 'Raspberry Pi 2', 'armv7hf', 'raspberrypi', 'sdcard'),
  ('raspberrypi400-64', 'Raspberry Pi 400', 'aarch64', 'raspberrypi', 'sdcard'),
  ('radxa-zero', 'Radxa Zero', 'aarch64', NULL, 'usb'),
  ('rockpi-4b-rk3399', 'ROCK Pi 4B', 'aarch64', NULL, 'sdcard')
) AS d(slug, name, arch, family, media)
JOIN "cpu_architecture" a ON a.slug = d.arch
LEFT JOIN "device_family" f ON f.slug = d.family
ON CONFLICT ("slug") DO NOTHING;
--> statement-breakpoint
INSERT INTO "device_type_alias" ("device_type", "is_referenced_by__alias")
SELECT dt.id, x.alias FROM (VALUES
  ('raspberry-pi2', 'raspberry-pi2'), ('raspberrypi400-64', 'raspberrypi400-64'), ('radxa-zero', 'radxa-zero'),
  ('rockpi-4b-rk3399', 'rockpi-4b-rk3399'),
  -- balena's older names, still resolved by the SDK and accepted by the API.
  ('raspberry-pi', 'raspberrypi'), ('raspberry-pi2', 'raspberrypi2'), ('genericx86-64-ext', 'genericx86-64')
) AS x(slug, alias)
JOIN "device_type" dt ON dt.slug = x.slug
ON CONFLICT ("is_referenced_by__alias") DO NOTHING;
--> statement-breakpoint
-- How each type is installed, in the contract's words: boot from an SD card (most boards), flash
-- the internal disk from a USB key (x86, eMMC boards), run an image (QEMU), or NVIDIA's tool.
UPDATE "device_type" SET "contract" = jsonb_set("contract", '{data,media,defaultBoot}', to_jsonb(
    CASE "contract" #>> '{data,media,installation}' WHEN 'sdcard' THEN 'sdcard' WHEN 'image' THEN 'image' ELSE 'internal' END), true)
 WHERE "contract" ? 'data';
--> statement-breakpoint
UPDATE "device_type" SET "contract" = jsonb_set("contract", '{data,media,altBoot}', '["usb_mass_storage"]'::jsonb, true)
 WHERE "contract" #>> '{data,media,defaultBoot}' = 'internal';
--> statement-breakpoint
UPDATE "device_type" SET "contract" = jsonb_set("contract", '{data,flashProtocol}', '"jetsonFlash"'::jsonb, true)
 WHERE "slug" = 'jetson-orin-nano-devkit-nvme';
--> statement-breakpoint
UPDATE "device_type" SET "contract" = "contract" || jsonb_build_object('partials',
  CASE "contract" #>> '{data,media,defaultBoot}'
    WHEN 'image' THEN jsonb_build_object(
      'instructions', jsonb_build_array('Start a virtual machine from the image you downloaded, then run the Flotilla agent installer in it.'),
      'bootDevice', jsonb_build_array('Start the virtual machine'))
    WHEN 'internal' THEN jsonb_build_object(
      'instructions', jsonb_build_array('Flash the downloaded image to a USB key.'),
      'bootDeviceExternal', jsonb_build_array('Boot the {{name}} from the USB key; it installs to the internal disk.'),
      'bootDeviceInternal', jsonb_build_array('Remove the USB key.'),
      'flashIndicator', jsonb_build_array('the device has powered off'),
      'bootDevice', jsonb_build_array('Connect power to the {{name}}'))
    ELSE jsonb_build_object('bootDevice', jsonb_build_array('Connect power to the {{name}}'))
  END)
 WHERE "contract" ? 'data';
