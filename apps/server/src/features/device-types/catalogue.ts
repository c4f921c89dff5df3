import { APP_VERSION } from "@flotilla/domain";

/**
 * balena's device-type JSON (`/device-types/v1`, balena-sdk's `DeviceType`), made from a row of
 * the device_type catalogue. What balena's `yocto` block names is an OS image; Flotilla's download
 * for every device type is the agent package, so that is what it names.
 */

/** A device_type row as read through the data API for these routes. */
export type DeviceTypeRow = {
  slug: string;
  name: string;
  is_private: boolean;
  /** An SVG data URL (migration 0035), as balena's `logo`. */
  logo: string | null;
  contract: { state?: string } | null;
  is_of__cpu_architecture: { slug: string }[];
  device_type_alias: { is_referenced_by__alias: string }[];
};

export const DEVICE_TYPE_SELECT =
  "$select=slug,name,is_private,logo,contract&$expand=is_of__cpu_architecture($select=slug),device_type_alias($select=is_referenced_by__alias)";

/** The file `GET /download` answers for every device type. */
export const agentFileName = (version: string) => `flotilla-agent-${version}.tgz`;

export function deviceTypeJson(row: DeviceTypeRow) {
  return {
    slug: row.slug,
    name: row.name,
    aliases: row.device_type_alias.map((alias) => alias.is_referenced_by__alias).filter((alias) => alias !== row.slug),
    arch: row.is_of__cpu_architecture[0]?.slug ?? "",
    state: row.contract?.state ?? "RELEASED",
    private: row.is_private,
    ...(row.logo ? { logoUrl: row.logo } : {}),
    yocto: { machine: row.slug, deployArtifact: agentFileName(APP_VERSION), fstype: "tgz", compressed: false },
    buildId: APP_VERSION,
    options: [],
  };
}

/** A slug or alias as balena accepts one in a path; anything else is "Invalid device type". */
export const isDeviceTypeSlug = (text: string | undefined): text is string =>
  text !== undefined && /^[\w-]{1,100}$/.test(text);

/** An OS version a download may be asked for: `latest` or a semver (any: the agent is the same for all). */
export const isImageVersion = (text: string) =>
  text === "latest" || /^v?\d{1,9}\.\d{1,9}\.\d{1,9}([+-][\w.+-]{0,100})?$/.test(text);
