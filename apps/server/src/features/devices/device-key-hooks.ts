import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/**
 * What a device key may change of its own device row through /v7 (data-api/permissions.ts
 * `deviceKeyPermissions`). balena's Supervisor PATCHes `device_name` (its config.json's
 * `initialDeviceName`, on first boot) and `is_pinned_on__release` (the release of a preloaded
 * image: src/api-binder/index.ts); older Supervisors wrote what they report the same way. Every
 * other field (its fleet, type, support access, activation, supervisor pin…) stays its users'
 * to write.
 */
export const DEVICE_KEY_WRITABLE_FIELDS: ReadonlySet<string> = new Set([
  "device_name",
  "is_pinned_on__release",
  "status",
  "os_version",
  "os_variant",
  "supervisor_version",
  "ip_address",
  "mac_address",
  "provisioning_progress",
  "provisioning_state",
  "cpu_id",
  "is_undervolted",
]);

export const deviceKeyWriteHooks: ResourceHooks = {
  beforeUpdate({ actorType, body }) {
    if (actorType !== "device") return;
    const refused = Object.keys(body).filter((name) => !DEVICE_KEY_WRITABLE_FIELDS.has(name));
    if (refused.length > 0) {
      throw new FlotillaError("unauthorized", `Unauthorized: device may not change ${refused.sort().join(", ")}.`);
    }
  },
};
