import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/**
 * Fields a device reports that its users may also write through /v7, as balena lets them
 * (balena-sdk scripts and tests set os_version, supervisor_version, addresses…). The lengths are
 * balena's, and so are the words of its refusals.
 */
const MAX_LENGTH: Record<string, [words: string, length: number]> = {
  status: ["a status", 50],
  os_version: ["an os version", 70],
  supervisor_version: ["a supervisor version", 20],
  public_address: ["a public address", 50],
  ip_address: ["an ip address", 2000],
  mac_address: ["a mac address", 900],
  provisioning_state: ["a provisioning state", 255],
  cpu_id: ["a cpu id", 255],
};

const OS_VARIANTS = new Set(["prod", "dev"]);

function checkReportedFields({ body }: { body: Record<string, unknown> }) {
  for (const [name, [words, length]] of Object.entries(MAX_LENGTH)) {
    const value = body[name];
    if (typeof value === "string" && value.length > length) {
      throw new FlotillaError(
        "bad_request",
        `It is necessary that each device that has ${words}, has ${words} that has a Length (Type) that is less than or equal to ${length}.`,
      );
    }
  }
  const variant = body.os_variant;
  if (variant !== undefined && variant !== null && !OS_VARIANTS.has(String(variant))) {
    throw new FlotillaError("bad_request", 'os_variant must be "prod", "dev" or null');
  }
  const progress = body.provisioning_progress;
  if (typeof progress === "number" && (progress < 0 || progress > 100)) {
    throw new FlotillaError("bad_request", "provisioning_progress must be from 0 to 100, or null");
  }
}

export const deviceReportedFieldHooks: ResourceHooks = {
  beforeCreate: checkReportedFields,
  beforeUpdate: checkReportedFields,
};
