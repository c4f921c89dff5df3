/**
 * Host OS and supervisor updates (spec 2 §4 "OS update target category per device", §5 Devices,
 * §7, §9). Shared by the server (which refuses what these rules refuse) and the dashboard (which
 * offers only what they allow). The update rules follow balena-hup-action-utils, which balena-sdk's
 * os.getSupportedOsUpdateVersions applies: the same minimum source and target versions, no
 * downgrade, no switch between development and production images, takeover for some device types.
 */

/** The handle of the system organization owning the public host-OS and supervisor fleets. */
export const OS_CATALOGUE_ORGANIZATION = "balena_os";

/** An OS version with a major above this is an ESR (extended support release) version (spec 2 §9). */
export const ESR_MAJOR_THRESHOLD = 2000;

/** OS types and versions are cached this long by the dashboard (spec 2 §9). */
export const OS_TYPES_CACHE_MS = 10 * 60_000;

/**
 * The actions configuration (spec 2 §5: "the minimum source version for an OS update comes from
 * the actions configuration"): balena-hup-action-utils' values. `takeover` lists the device types
 * whose update from below the version to it or above is a takeover (a full re-flash).
 */
export const OS_UPDATE_ACTIONS_CONFIG = {
  minSourceVersion: "2.14.0+rev1",
  minTargetVersion: "2.16.0+rev1",
  takeover: {
    "jetson-xavier": "6.0.50",
    "jetson-xavier-nx-devkit": "6.0.50+rev1",
    "jetson-xavier-nx-devkit-emmc": "6.0.39",
    // Flotilla's catalogue: the Orin Nano moves to a new partition layout with 6.x.
    "jetson-orin-nano-devkit-nvme": "6.0.0",
  } as Readonly<Record<string, string>>,
} as const;

export type OsVersion = {
  major: number;
  minor: number;
  patch: number;
  prerelease: string;
  /** `+rev3` → 3; 0 when absent. */
  revision: number;
  /** `prod` or `dev` when the version names it (`2.88.4+rev1.prod`). */
  variant: "prod" | "dev" | undefined;
  /** `major.minor.patch[-prerelease][+revN]`, as the catalogue's `raw_version` writes it. */
  version: string;
};

const VERSION_PATTERN = /(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?/;

/**
 * The OS version in a device's `os_version` ("balenaOS 6.1.0", "Resin OS 2.3.0+rev1") or a
 * release's `raw_version` ("2.115.18", "2024.10.2", "6.0.13+rev2.prod"); undefined when there is
 * none ("could not parse OS version").
 */
export function parseOsVersion(text: string | null | undefined): OsVersion | undefined {
  const match = typeof text === "string" ? VERSION_PATTERN.exec(text) : null;
  if (!match) return undefined;
  const [, major = "0", minor = "0", patch = "0", prerelease = "", build = ""] = match;
  const buildParts = build ? build.split(".") : [];
  const revision = Number(/^rev(\d+)$/.exec(buildParts.find((p) => /^rev\d+$/.test(p)) ?? "")?.[1] ?? 0);
  const variant = (["prod", "dev"] as const).find((v) => buildParts.includes(v) || prerelease.split(".").includes(v));
  const core = `${Number(major)}.${Number(minor)}.${Number(patch)}`;
  return {
    major: Number(major),
    minor: Number(minor),
    patch: Number(patch),
    prerelease,
    revision,
    variant,
    version: `${core}${prerelease ? `-${prerelease}` : ""}${revision > 0 ? `+rev${revision}` : ""}`,
  };
}

/** Semver order with balena's revision as the last part; a pre-release sorts before its release. */
export function compareOsVersions(a: OsVersion, b: OsVersion): number {
  return (
    a.major - b.major ||
    a.minor - b.minor ||
    a.patch - b.patch ||
    comparePrerelease(a.prerelease, b.prerelease) ||
    a.revision - b.revision
  );
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (!a) return 1;
  if (!b) return -1;
  const left = a.split(".");
  const right = b.split(".");
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const x = left[i];
    const y = right[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const numeric = /^\d+$/.test(x) && /^\d+$/.test(y);
    const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
    if (order !== 0) return order;
  }
  return 0;
}

const versionOf = (text: string) => {
  const parsed = parseOsVersion(text);
  if (!parsed) throw new Error(`not an OS version: ${text}`);
  return parsed;
};

/** ESR versions have a major above 2000 (2024.10.2); false when the version cannot be read. */
export function isEsrVersion(version: string | OsVersion | null | undefined): boolean {
  const parsed = typeof version === "object" && version !== null ? version : parseOsVersion(version);
  return parsed !== undefined && parsed.major > ESR_MAJOR_THRESHOLD;
}

/**
 * An OS release of a device type's host-OS fleets, as balena-sdk's os.getAvailableOsVersions
 * answers it: `osType` from the fleet's `release-policy` tag, `basedOnVersion` from the release's
 * `meta-balena-base` tag (the default-line version an ESR version is built on).
 */
export type OsRelease = {
  raw_version: string;
  osType: "default" | "esr" | string;
  basedOnVersion?: string | undefined;
  variant?: string | null | undefined;
};

export const OS_UPDATE_CATEGORIES = [
  "offline",
  "not_supported",
  "up_to_date",
  "version_not_available",
  "updatable",
  "updatable_with_switch_to_esr",
  "downgrade_cannot_switch_to_esr",
  "forbidden_switch_to_non_esr",
] as const;
export type OsUpdateCategory = (typeof OS_UPDATE_CATEGORIES)[number];

/** The categories an OS update may start from. */
export const STARTABLE_OS_UPDATE_CATEGORIES: readonly OsUpdateCategory[] = [
  "updatable",
  "updatable_with_switch_to_esr",
];

export type OsUpdateDevice = {
  deviceType: string;
  isOnline: boolean;
  osVersion: string | null | undefined;
  osVariant?: string | null | undefined;
};

/**
 * Why an update of this device type from `current` to `target` is not supported (the reason
 * errors.update_not_supported_for_type_version carries), or undefined when it is: the
 * balena-hup-action-utils rules (minimum source and target, no downgrade, same image variant).
 */
export function osUpdateRefusal(
  current: OsVersion,
  target: OsVersion,
  currentVariant?: string | null,
): string | undefined {
  const targetVariant = target.variant;
  const variant =
    current.variant ?? (currentVariant === "dev" || currentVariant === "prod" ? currentVariant : undefined);
  if (targetVariant && (variant === "dev") !== (targetVariant === "dev")) {
    return "Updates cannot be performed between development and production balenaOS variants";
  }
  const order = compareOsVersions(target, current);
  if (order < 0) return "OS downgrades are not allowed";
  if (order === 0) return "Current OS version matches Target OS version";
  const { minSourceVersion, minTargetVersion } = OS_UPDATE_ACTIONS_CONFIG;
  if (!isEsrVersion(current) && compareOsVersions(current, versionOf(minSourceVersion)) < 0) {
    return `Current OS version must be >= ${minSourceVersion}`;
  }
  if (!isEsrVersion(target) && compareOsVersions(target, versionOf(minTargetVersion)) < 0) {
    return `Target OS version must be >= ${minTargetVersion}`;
  }
  return undefined;
}

export type OsUpdateAssessment = {
  category: OsUpdateCategory;
  /** The target as the catalogue names it (its `raw_version`), when it is there. */
  target?: OsRelease | undefined;
  /** Why an update cannot start (a rule's text), for not_supported. */
  reason?: string | undefined;
  /** The update is a takeover (advanced update): data loss, no rollback (spec 2 §5). */
  takeover?: boolean;
};

/**
 * The OS update target category of a device for a chosen target version (spec 2 §4):
 * - offline: the device is not online (an update goes to the device at once);
 * - not supported: its OS version cannot be read ("could not parse OS version"), its device type
 *   has no OS releases at all, or the update rules refuse it (below the minimum source version,
 *   a downgrade within the same line, a development ↔ production switch);
 * - up to date: it already runs the target version;
 * - version not available: the device type's catalogue has no such version;
 * - updatable: a newer version of the same line (default → default, ESR → ESR);
 * - updatable with switch to ESR: a default-line device to an ESR version built on (its
 *   meta-balena-base) a newer version than the device runs;
 * - downgrade cannot switch to ESR: a default-line device to an ESR version built on an older
 *   version than the device runs: switching would be a downgrade;
 * - forbidden switch to non-ESR: an ESR device to a default-line version (ESR devices stay on ESR).
 * `available` are the device type's OS releases (final, successful, not invalidated).
 */
export function osUpdateCategory(
  device: OsUpdateDevice,
  available: readonly OsRelease[],
  targetVersion: string,
): OsUpdateAssessment {
  if (!device.isOnline) return { category: "offline" };
  const current = parseOsVersion(device.osVersion);
  if (!current) return { category: "not_supported", reason: "could not parse OS version" };
  if (available.length === 0) return { category: "not_supported", reason: "no OS releases for this device type" };
  const wanted = parseOsVersion(targetVersion);
  const target = wanted
    ? available.find((r) => {
        const version = parseOsVersion(r.raw_version);
        return version !== undefined && compareOsVersions(version, wanted) === 0;
      })
    : undefined;
  if (!wanted || !target) return { category: "version_not_available" };
  const targetParsed = versionOf(target.raw_version);
  if (compareOsVersions(targetParsed, current) === 0) return { category: "up_to_date", target };
  const deviceEsr = isEsrVersion(current);
  const targetEsr = target.osType === "esr" || isEsrVersion(targetParsed);
  if (deviceEsr && !targetEsr) return { category: "forbidden_switch_to_non_esr", target };
  if (!deviceEsr && targetEsr) {
    // As balena-sdk's getSupportedOsUpdateVersions: the switch is an update to the ESR's base.
    const base = parseOsVersion(target.basedOnVersion ?? "");
    if (!base || compareOsVersions(base, current) < 0) return { category: "downgrade_cannot_switch_to_esr", target };
    const reason = osUpdateRefusal(current, base, device.osVariant);
    if (reason) return { category: "not_supported", target, reason };
    return {
      category: "updatable_with_switch_to_esr",
      target,
      takeover: needsTakeover(device.deviceType, current, base),
    };
  }
  const reason = osUpdateRefusal(current, targetParsed, device.osVariant);
  if (reason) return { category: "not_supported", target, reason };
  return { category: "updatable", target, takeover: needsTakeover(device.deviceType, current, targetParsed) };
}

/**
 * Takeover (advanced update, spec 2 §5): the device type's OS changes its layout at a version,
 * and the device crosses it. It re-flashes the device: data loss, no rollback.
 */
export function needsTakeover(deviceType: string, current: OsVersion, target: OsVersion): boolean {
  const at = OS_UPDATE_ACTIONS_CONFIG.takeover[deviceType];
  if (!at) return false;
  const threshold = versionOf(at);
  return compareOsVersions(current, threshold) < 0 && compareOsVersions(target, threshold) >= 0;
}

/**
 * Every OS release of the device type with its category for this device, newest first: the
 * targets a dashboard offers are the startable ones.
 */
export function osUpdateTargets(
  device: OsUpdateDevice,
  available: readonly OsRelease[],
): Array<OsUpdateAssessment & { target: OsRelease }> {
  return [...available]
    .filter((r) => parseOsVersion(r.raw_version) !== undefined)
    .sort((a, b) => compareOsVersions(versionOf(b.raw_version), versionOf(a.raw_version)))
    .map((release) => ({ ...osUpdateCategory(device, available, release.raw_version), target: release }));
}

/**
 * Why no update can start although newer versions of the device's line exist — the rules refuse
 * them all (e.g. the device runs an OS below the minimum source version) — or undefined.
 */
export function newerVersionsRefusal(device: OsUpdateDevice, available: readonly OsRelease[]): string | undefined {
  const current = parseOsVersion(device.osVersion);
  if (!current) return undefined;
  const targets = osUpdateTargets(device, available);
  if (targets.some((t) => STARTABLE_OS_UPDATE_CATEGORIES.includes(t.category))) return undefined;
  // Newer versions of the device's own line (an ESR switch is judged by its base version).
  const sameLine = (release: OsRelease) =>
    (release.osType === "esr" || isEsrVersion(release.raw_version)) === isEsrVersion(current);
  return targets.find(
    (t) =>
      t.category === "not_supported" &&
      sameLine(t.target) &&
      compareOsVersions(versionOf(t.target.raw_version), current) > 0,
  )?.reason;
}

/** The device's own state when no target is chosen: up to date when nothing newer exists. */
export function osUpdateSummary(device: OsUpdateDevice, available: readonly OsRelease[]): OsUpdateCategory {
  if (!device.isOnline) return "offline";
  if (!parseOsVersion(device.osVersion) || available.length === 0) return "not_supported";
  const startable = osUpdateTargets(device, available).some((t) => STARTABLE_OS_UPDATE_CATEGORIES.includes(t.category));
  if (startable) return "updatable";
  return newerVersionsRefusal(device, available) ? "not_supported" : "up_to_date";
}

/** A supervisor release as the catalogue holds it (spec 2 §7 "supervisor releases"). */
export type SupervisorReleaseFacts = {
  status: string | null;
  is_final: boolean;
  is_invalidated: boolean;
  raw_version: string;
};

/** Selectable supervisor releases: successful, final, not invalidated, not semver 0.0.0. */
export function isSelectableSupervisorRelease(release: SupervisorReleaseFacts): boolean {
  const version = parseOsVersion(release.raw_version);
  return (
    release.status === "success" &&
    release.is_final &&
    !release.is_invalidated &&
    version !== undefined &&
    version.major + version.minor + version.patch > 0
  );
}

/** Supervisor updates are blocked for ESR devices (spec 2 §5): warnings.cannot_update_esr_supervisor. */
export function supervisorUpdateBlocked(osVersion: string | null | undefined): boolean {
  return isEsrVersion(osVersion);
}

/** The text after "balenaOS " a device reports once it runs `version` (the simulator's and balena's form). */
export const osVersionText = (version: string) => `balenaOS ${version}`;
