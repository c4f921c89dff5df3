/**
 * Versioned migration of what the dashboard keeps in localStorage (spec 2 §8: "storage migration
 * failures are reported"). `flotilla.storageVersion` records the version of the stored data; at
 * boot, before anything reads a preference, every migration above it runs in order and the
 * version is written after each one. A migration that throws does not fail the boot: the
 * dashboard's own keys (`flotilla.*`) are cleared so the defaults are used, and the user gets
 * a toast saying so. The session token (`balena-token`, the SDK's) is never touched.
 *
 * To change a stored key or a value's form: add a migration with the next version number and
 * update preferences.ts; never edit a migration that has shipped.
 */

/** The part of the Storage interface the migrations use (injectable for tests). */
export interface MigrationStorage {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface StorageMigration {
  /** The version the stored data has after this migration. */
  readonly version: number;
  readonly description: string;
  migrate(storage: MigrationStorage): void;
}

export const STORAGE_VERSION_KEY = "flotilla.storageVersion";
/** The prefix of every key the dashboard owns. */
export const DASHBOARD_KEY_PREFIX = "flotilla.";

/** Moves a value to its new key; a value already under the new key wins. */
export function renameKey(from: string, to: string): (storage: MigrationStorage) => void {
  return (storage) => {
    const value = storage.getItem(from);
    if (value === null) return;
    if (storage.getItem(to) === null) storage.setItem(to, value);
    storage.removeItem(from);
  };
}

export const STORAGE_MIGRATIONS: readonly StorageMigration[] = [
  {
    version: 1,
    description:
      "Every preference key is flotilla.<preference name>: the sidebar state moves to flotilla.sidebarCollapsed",
    migrate: renameKey("flotilla.sidebar.collapsed", "flotilla.sidebarCollapsed"),
  },
  {
    version: 2,
    description:
      "Apps (spec 1 §9): the experimental option stored as flotilla.showApps moves to flotilla.displayApps, and flotilla.appsMigrated records that the apps were migrated",
    migrate: migrateApps,
  },
];

/** The local-storage flag that records that the browser's apps data was migrated (spec 1 §9). */
export const APPS_MIGRATED_KEY = "flotilla.appsMigrated";

/**
 * Once per browser: the "show apps" choice of dashboards before apps had their own class moves to
 * the display-apps preference; the flag keeps it from running again (a rollback that writes the old
 * key back does not overwrite the user's newer choice).
 */
export function migrateApps(storage: MigrationStorage) {
  if (storage.getItem(APPS_MIGRATED_KEY) === "true") return;
  renameKey("flotilla.showApps", "flotilla.displayApps")(storage);
  storage.setItem(APPS_MIGRATED_KEY, "true");
}

export const CURRENT_STORAGE_VERSION = STORAGE_MIGRATIONS.at(-1)?.version ?? 0;

export type StorageMigrationOutcome =
  /** No localStorage (disabled, or it throws when read): preferences use their defaults anyway. */
  | { status: "unavailable" }
  /** Nothing of ours stored yet: the current version is recorded, nothing to migrate. */
  | { status: "fresh"; version: number }
  | { status: "current"; version: number }
  /** Written by a newer dashboard (a rollback): left as it is. */
  | { status: "newer"; version: number }
  | { status: "migrated"; from: number; to: number }
  | { status: "failed"; from: number; failedAt: number; error: unknown };

/** The stored version: 0 when absent or unreadable (data from before versioning). */
export function readStorageVersion(raw: string | null): number {
  if (raw === null) return 0;
  const version = Number(raw);
  return Number.isSafeInteger(version) && version >= 0 ? version : 0;
}

function dashboardKeys(storage: MigrationStorage): string[] {
  const keys: string[] = [];
  for (let index = 0; index < storage.length; index++) {
    const key = storage.key(index);
    if (key?.startsWith(DASHBOARD_KEY_PREFIX)) keys.push(key);
  }
  return keys;
}

/** Runs the migrations the stored data needs. Never throws. */
export function migrateStorage(
  storage: MigrationStorage | undefined,
  migrations: readonly StorageMigration[] = STORAGE_MIGRATIONS,
): StorageMigrationOutcome {
  const target = migrations.at(-1)?.version ?? 0;
  if (!storage) return { status: "unavailable" };
  let from: number;
  let ours: string[];
  try {
    from = readStorageVersion(storage.getItem(STORAGE_VERSION_KEY));
    ours = dashboardKeys(storage);
  } catch {
    return { status: "unavailable" };
  }
  if (from > target) return { status: "newer", version: from };
  if (from === target) return { status: "current", version: from };
  if (ours.length === 0) {
    try {
      storage.setItem(STORAGE_VERSION_KEY, String(target));
    } catch {
      // Read-only storage (quota, private mode): nothing is stored, so nothing is lost.
    }
    return { status: "fresh", version: target };
  }

  let version = from;
  for (const migration of migrations) {
    if (migration.version <= version) continue;
    try {
      migration.migrate(storage);
      storage.setItem(STORAGE_VERSION_KEY, String(migration.version));
      version = migration.version;
    } catch (error) {
      resetToDefaults(storage, target);
      return { status: "failed", from, failedAt: migration.version, error };
    }
  }
  return { status: "migrated", from, to: version };
}

/** After a failed migration: clear our keys (the defaults apply) and record the current version. */
function resetToDefaults(storage: MigrationStorage, version: number) {
  try {
    for (const key of dashboardKeys(storage)) storage.removeItem(key);
    storage.setItem(STORAGE_VERSION_KEY, String(version));
  } catch {
    // Storage that fails even this is left alone; the preferences' reads fall back to the defaults.
  }
}

/** `globalThis.localStorage`, or undefined where reading it throws (blocked storage). */
export function browserStorage(): MigrationStorage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined;
  }
}

/** At boot: migrate, and tell the user (`report`) when a migration failed — never throws. */
export function runStorageMigrations(options: {
  storage?: MigrationStorage | undefined;
  migrations?: readonly StorageMigration[];
  report: (outcome: Extract<StorageMigrationOutcome, { status: "failed" }>) => void;
}): StorageMigrationOutcome {
  const storage = "storage" in options ? options.storage : browserStorage();
  const outcome = migrateStorage(storage, options.migrations);
  if (outcome.status === "failed") {
    try {
      options.report(outcome);
    } catch {
      // Reporting must not fail the boot either.
    }
  }
  return outcome;
}
