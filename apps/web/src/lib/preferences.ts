/**
 * Small per-browser preferences kept in localStorage (sidebar state, theme, display apps), one
 * key `flotilla.<name>` each, JSON values. Unreadable storage (private mode, quota) falls back to
 * the default. Changing a key or a value's form needs a storage migration (storage-migrations.ts).
 */
export const PREFERENCE_KEYS = {
  sidebarCollapsed: "flotilla.sidebarCollapsed",
  colorMode: "flotilla.colorMode",
  displayApps: "flotilla.displayApps",
  headerColor: "flotilla.headerColor",
  navigationStripes: "flotilla.navigationStripes",
  cookieConsent: "flotilla.cookieConsent",
  changelogVersion: "flotilla.changelogVersion",
  deviceLogsUtc: "flotilla.deviceLogsUtc",
  deviceLogsTimestamps: "flotilla.deviceLogsTimestamps",
  lastOrganization: "flotilla.lastOrganization",
} as const;

export interface Preferences {
  sidebarCollapsed: boolean;
  colorMode: "light" | "dark";
  /** The experimental "display apps" option (spec 1 §2.4); off by default. */
  displayApps: boolean;
  /** The experimental header colour (spec 1 §2.4): "" is the default slate. */
  headerColor: string;
  /** The experimental navigation stripes (spec 1 §2.4). */
  navigationStripes: boolean;
  /** The cookie banner's answer: "" not asked yet, "essentials" or "analytics" (spec 1 §2.5). */
  cookieConsent: string;
  /** The dashboard version whose changelog the user has seen ("" never). */
  changelogVersion: string;
  /** Device live logs show times in UTC instead of the browser's zone (spec 2 §9). */
  deviceLogsUtc: boolean;
  /** Device live logs show a timestamp column (spec 2 §9). */
  deviceLogsTimestamps: boolean;
  /** The organization last worked in (an organization's or a fleet's page, a fleet created there); 0 none. */
  lastOrganization: number;
}

export const BUILT_IN_PREFERENCE_DEFAULTS: Readonly<Preferences> = {
  sidebarCollapsed: false,
  colorMode: "light",
  displayApps: false,
  headerColor: "",
  navigationStripes: false,
  cookieConsent: "",
  changelogVersion: "",
  deviceLogsUtc: false,
  deviceLogsTimestamps: true,
  lastOrganization: 0,
};
let defaults: Readonly<Preferences> = BUILT_IN_PREFERENCE_DEFAULTS;
const listeners = new Set<() => void>();
const emit = () => {
  for (const listener of listeners) listener();
};

/**
 * Sets the defaults of this deployment, for preferences the user has not chosen themself (at
 * boot: the `displayApps` feature flag). A stored choice still wins.
 */
export function setPreferenceDefaults(overrides: Partial<Preferences>) {
  defaults = { ...BUILT_IN_PREFERENCE_DEFAULTS, ...overrides };
  emit();
}

export const getPreferenceDefaults = (): Readonly<Preferences> => defaults;

function read<K extends keyof Preferences>(key: K): Preferences[K] {
  try {
    const raw = globalThis.localStorage?.getItem(PREFERENCE_KEYS[key]);
    if (raw === null || raw === undefined) return defaults[key];
    const value: unknown = JSON.parse(raw);
    return typeof value === typeof defaults[key] ? (value as Preferences[K]) : defaults[key];
  } catch {
    return defaults[key];
  }
}

export function getPreference<K extends keyof Preferences>(key: K): Preferences[K] {
  return read(key);
}

export function setPreference<K extends keyof Preferences>(key: K, value: Preferences[K]) {
  try {
    globalThis.localStorage?.setItem(PREFERENCE_KEYS[key], JSON.stringify(value));
  } catch {
    // Not persisted; the change still applies to this page.
  }
  emit();
}

/** Calls `listener` when a preference changes, here or in another tab (usePreference). */
export function subscribePreferences(listener: () => void) {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key?.startsWith("flotilla.")) listener();
  };
  globalThis.addEventListener?.("storage", onStorage);
  return () => {
    listeners.delete(listener);
    globalThis.removeEventListener?.("storage", onStorage);
  };
}
