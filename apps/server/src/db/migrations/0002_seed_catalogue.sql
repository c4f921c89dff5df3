-- Fixed rows every installation has: roles, fleet types and the device-type catalogue.
INSERT INTO "organization_membership_role" ("name") VALUES ('administrator'), ('member');
--> statement-breakpoint
INSERT INTO "application_membership_role" ("name", "description") VALUES
  ('observer', 'Read-only access to the fleet'),
  ('safe-operator', 'Device access without deleting or configuring devices'),
  ('operator', 'Device access including SSH, adding and deleting devices, device variables'),
  ('safe-developer', 'Developer rights without deleting devices'),
  ('developer', 'Operator rights plus code, releases, images and fleet variables');
--> statement-breakpoint
INSERT INTO "role" ("name") VALUES ('balena_admin'), ('support_agent') ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "application_type" ("slug", "name", "description", "supports_web_url", "supports_multicontainer", "supports_gateway_mode", "requires_payment", "is_legacy", "needs__os_version_range", "maximum_device_count") VALUES
  ('microservices', 'Microservices', 'Several containers per device, public device URLs and gateway mode', true, true, true, false, false, '>=2.12.0', NULL),
  ('essentials', 'Essentials', 'One container per device', false, false, false, false, false, '>=2.7.8', NULL),
  ('legacy-v2', 'Legacy v2', 'Single container with public device URLs, for fleets created before multicontainer', true, false, false, false, true, NULL, NULL),
  ('legacy-v1', 'Legacy v1', 'Single container, for the oldest fleets', true, false, false, false, true, NULL, NULL);
--> statement-breakpoint
INSERT INTO "cpu_architecture" ("slug") VALUES ('rpi'), ('armv7hf'), ('aarch64'), ('amd64'), ('i386');
--> statement-breakpoint
INSERT INTO "device_manufacturer" ("slug", "name") VALUES
  ('raspberry-pi', 'Raspberry Pi'), ('nvidia', 'NVIDIA'), ('intel', 'Intel'), ('beagleboard', 'BeagleBoard.org'),
  ('hardkernel', 'Hardkernel'), ('generic', 'Generic'), ('balena', 'balena');
--> statement-breakpoint
INSERT INTO "device_family" ("slug", "name", "is_manufactured_by__device_manufacturer")
SELECT f.slug, f.name, m.id FROM (VALUES
  ('raspberrypi', 'Raspberry Pi', 'raspberry-pi'),
  ('jetson', 'Jetson', 'nvidia'),
  ('nuc', 'NUC', 'intel'),
  ('beaglebone', 'BeagleBone', 'beagleboard'),
  ('odroid', 'ODROID', 'hardkernel'),
  ('generic', 'Generic', 'generic'),
  ('balenafin', 'balenaFin', 'balena')
) AS f(slug, name, manufacturer) JOIN "device_manufacturer" m ON m.slug = f.manufacturer;
--> statement-breakpoint
INSERT INTO "device_type" ("slug", "name", "is_of__cpu_architecture", "belongs_to__device_family", "contract")
SELECT d.slug, d.name, a.id, f.id,
  jsonb_build_object('slug', d.slug, 'name', d.name, 'type', 'sw.device-type', 'version', '1',
    'data', jsonb_build_object('arch', d.arch, 'media', jsonb_build_object('installation', d.media)))
FROM (VALUES
  ('raspberrypi4-64', 'Raspberry Pi 4 (using 64bit OS)', 'aarch64', 'raspberrypi', 'sdcard'),
  ('raspberrypi5', 'Raspberry Pi 5', 'aarch64', 'raspberrypi', 'sdcard'),
  ('raspberrypi3-64', 'Raspberry Pi 3 (using 64bit OS)', 'aarch64', 'raspberrypi', 'sdcard'),
  ('raspberrypi3', 'Raspberry Pi 3', 'armv7hf', 'raspberrypi', 'sdcard'),
  ('raspberrypi0-2w-64', 'Raspberry Pi Zero 2 W (64bit OS)', 'aarch64', 'raspberrypi', 'sdcard'),
  ('raspberry-pi', 'Raspberry Pi (v1 / Zero / Zero W)', 'rpi', 'raspberrypi', 'sdcard'),
  ('raspberrypicm4-ioboard', 'Raspberry Pi CM4 IO Board', 'aarch64', 'raspberrypi', 'usb'),
  ('fincm3', 'balenaFin (CM3)', 'armv7hf', 'balenafin', 'usb'),
  ('jetson-nano', 'Jetson Nano SD-CARD', 'aarch64', 'jetson', 'sdcard'),
  ('jetson-orin-nano-devkit-nvme', 'Jetson Orin Nano 8GB (SD) Devkit NVME', 'aarch64', 'jetson', 'usb'),
  ('intel-nuc', 'Intel NUC', 'amd64', 'nuc', 'usb'),
  ('genericx86-64-ext', 'Generic x86_64 (GPT)', 'amd64', 'generic', 'usb'),
  ('generic-amd64', 'Generic AMD64 (GPT)', 'amd64', 'generic', 'usb'),
  ('generic-aarch64', 'Generic AARCH64', 'aarch64', 'generic', 'usb'),
  ('qemux86-64', 'QEMU X86 64bit', 'amd64', 'generic', 'image'),
  ('beaglebone-black', 'BeagleBone Black', 'armv7hf', 'beaglebone', 'sdcard'),
  ('odroid-xu4', 'ODROID-XU4', 'armv7hf', 'odroid', 'sdcard')
) AS d(slug, name, arch, family, media)
JOIN "cpu_architecture" a ON a.slug = d.arch
JOIN "device_family" f ON f.slug = d.family;
--> statement-breakpoint
INSERT INTO "device_type_alias" ("device_type", "is_referenced_by__alias")
SELECT id, slug FROM "device_type";
