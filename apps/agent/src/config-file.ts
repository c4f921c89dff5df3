import fs from "node:fs";
import { UsageError } from "./state-file.ts";

/**
 * The fields `register` takes from a device configuration file (`POST /download-config`, the
 * dashboard's "Download configuration"): balena's config.json names where they overlap.
 */
export type DeviceConfigFile = {
  apiEndpoint: string;
  apiKey: string;
  applicationId: number;
  deviceType: string | undefined;
  /** The image registry's `host[:port]`, the only one the device's credentials go to. */
  registryEndpoint: string | undefined;
};

/** A registry as image names start with it: `host[:port]`, no scheme or path. */
const REGISTRY_HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;

export function isRegistryHost(value: string): boolean {
  return REGISTRY_HOST.test(value);
}

export function readConfigFile(file: string): DeviceConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === "ENOENT"
        ? `--config ${file} does not exist`
        : `cannot read --config ${file}: ${(error as Error).message}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--config ${file} is not JSON; download the configuration again`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--config ${file} is not a JSON object; download the configuration again`);
  }
  const config = parsed as Record<string, unknown>;
  const text_ = (name: string) => {
    const value = config[name];
    if (typeof value !== "string" || value === "") throw new UsageError(`--config ${file} has no "${name}"`);
    return value;
  };
  const applicationId = config.applicationId;
  if (typeof applicationId !== "number" || !Number.isSafeInteger(applicationId) || applicationId < 1) {
    throw new UsageError(`--config ${file} has no "applicationId" (the fleet's id)`);
  }
  const deviceType = config.deviceType;
  const registryEndpoint = config.registryEndpoint;
  if (registryEndpoint !== undefined && (typeof registryEndpoint !== "string" || !isRegistryHost(registryEndpoint))) {
    throw new UsageError(`--config ${file} has a "registryEndpoint" that is not host[:port]`);
  }
  return {
    apiEndpoint: text_("apiEndpoint"),
    apiKey: text_("apiKey"),
    applicationId,
    deviceType: typeof deviceType === "string" && deviceType !== "" ? deviceType : undefined,
    registryEndpoint,
  };
}
