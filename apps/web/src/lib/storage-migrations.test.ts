import { describe, expect, it, vi } from "vitest";
import { PREFERENCE_KEYS } from "./preferences.ts";
import {
  APPS_MIGRATED_KEY,
  CURRENT_STORAGE_VERSION,
  type MigrationStorage,
  migrateApps,
  migrateStorage,
  readStorageVersion,
  runStorageMigrations,
  STORAGE_VERSION_KEY,
  type StorageMigration,
} from "./storage-migrations.ts";

/** A Map-backed localStorage. */
function memoryStorage(initial: Record<string, string> = {}): MigrationStorage & { dump(): Record<string, string> } {
  const items = new Map(Object.entries(initial));
  return {
    get length() {
      return items.size;
    },
    key: (index) => [...items.keys()][index] ?? null,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, String(value)),
    removeItem: (key) => void items.delete(key),
    dump: () => Object.fromEntries(items),
  };
}

describe("storage migrations", () => {
  it("moves the sidebar state of unversioned storage to its current key", () => {
    const storage = memoryStorage({
      "flotilla.sidebar.collapsed": "true",
      "flotilla.colorMode": '"dark"',
      "balena-token": "a.b.c",
    });
    expect(migrateStorage(storage)).toEqual({ status: "migrated", from: 0, to: CURRENT_STORAGE_VERSION });
    expect(storage.dump()).toEqual({
      [PREFERENCE_KEYS.sidebarCollapsed]: "true",
      [PREFERENCE_KEYS.colorMode]: '"dark"',
      "balena-token": "a.b.c",
      [APPS_MIGRATED_KEY]: "true",
      [STORAGE_VERSION_KEY]: String(CURRENT_STORAGE_VERSION),
    });
  });

  it("migrates the apps once and records it in a local-storage flag (spec 1 §9)", () => {
    const storage = memoryStorage({ [STORAGE_VERSION_KEY]: "1", "flotilla.showApps": "true" });
    expect(migrateStorage(storage)).toEqual({ status: "migrated", from: 1, to: 2 });
    expect(storage.getItem(APPS_MIGRATED_KEY)).toBe("true");
    expect(storage.getItem(PREFERENCE_KEYS.displayApps)).toBe("true");
    expect(storage.getItem("flotilla.showApps")).toBeNull();
    // Once flagged, an old key written back (a rollback) leaves the newer choice alone.
    storage.setItem("flotilla.showApps", "false");
    migrateApps(storage);
    expect(storage.getItem(PREFERENCE_KEYS.displayApps)).toBe("true");
  });

  it("keeps a value already stored under the current key", () => {
    const storage = memoryStorage({ "flotilla.sidebar.collapsed": "true", "flotilla.sidebarCollapsed": "false" });
    migrateStorage(storage);
    expect(storage.getItem("flotilla.sidebarCollapsed")).toBe("false");
    expect(storage.getItem("flotilla.sidebar.collapsed")).toBeNull();
  });

  it("runs only the migrations above the stored version, in order, recording each", () => {
    const order: number[] = [];
    const migrations: StorageMigration[] = [1, 2, 3].map((version) => ({
      version,
      description: `to ${version}`,
      migrate: (storage) => {
        order.push(version);
        storage.setItem(`flotilla.step${version}`, "x");
      },
    }));
    const storage = memoryStorage({ [STORAGE_VERSION_KEY]: "1" });
    expect(migrateStorage(storage, migrations)).toEqual({ status: "migrated", from: 1, to: 3 });
    expect(order).toEqual([2, 3]);
    expect(storage.getItem(STORAGE_VERSION_KEY)).toBe("3");
    expect(migrateStorage(storage, migrations)).toEqual({ status: "current", version: 3 });
    expect(order).toEqual([2, 3]);
  });

  it("records the version on a fresh browser without migrating anything", () => {
    const storage = memoryStorage({ "balena-token": "a.b.c" });
    expect(migrateStorage(storage)).toEqual({ status: "fresh", version: CURRENT_STORAGE_VERSION });
    expect(storage.getItem(STORAGE_VERSION_KEY)).toBe(String(CURRENT_STORAGE_VERSION));
  });

  it("leaves data of a newer dashboard alone", () => {
    const storage = memoryStorage({ [STORAGE_VERSION_KEY]: "99", "flotilla.sidebar.collapsed": "true" });
    expect(migrateStorage(storage)).toEqual({ status: "newer", version: 99 });
    expect(storage.getItem("flotilla.sidebar.collapsed")).toBe("true");
  });

  it("treats a missing or garbled version as data from before versioning", () => {
    expect(readStorageVersion(null)).toBe(0);
    expect(readStorageVersion("abc")).toBe(0);
    expect(readStorageVersion("-2")).toBe(0);
    expect(readStorageVersion("1.5")).toBe(0);
    expect(readStorageVersion("2")).toBe(2);
  });

  it("does not report unusable storage (preferences fall back to their defaults anyway)", () => {
    const report = vi.fn();
    expect(runStorageMigrations({ storage: undefined, report })).toEqual({ status: "unavailable" });
    const throwing = memoryStorage();
    throwing.getItem = () => {
      throw new DOMException("denied", "SecurityError");
    };
    expect(runStorageMigrations({ storage: throwing, report })).toEqual({ status: "unavailable" });
    const readOnly = memoryStorage();
    readOnly.setItem = () => {
      throw new DOMException("full", "QuotaExceededError");
    };
    expect(runStorageMigrations({ storage: readOnly, report })).toEqual({
      status: "fresh",
      version: CURRENT_STORAGE_VERSION,
    });
    expect(report).not.toHaveBeenCalled();
  });

  it("reports a failed migration, clears the dashboard's keys so the defaults apply, and carries on", () => {
    const storage = memoryStorage({
      "flotilla.colorMode": '"dark"',
      "flotilla.old": "1",
      "balena-token": "a.b.c",
    });
    const boom = new Error("cannot read the old data");
    const migrations: StorageMigration[] = [
      { version: 1, description: "fine", migrate: (s) => s.setItem("flotilla.one", "1") },
      {
        version: 2,
        description: "broken",
        migrate: () => {
          throw boom;
        },
      },
    ];
    const report = vi.fn();
    const outcome = runStorageMigrations({ storage, migrations, report });
    expect(outcome).toEqual({ status: "failed", from: 0, failedAt: 2, error: boom });
    expect(report).toHaveBeenCalledExactlyOnceWith(outcome);
    expect(storage.dump()).toEqual({ "balena-token": "a.b.c", [STORAGE_VERSION_KEY]: "2" });
    // The next boot starts clean: nothing to migrate, nothing reported.
    expect(runStorageMigrations({ storage, migrations, report })).toEqual({ status: "current", version: 2 });
    expect(report).toHaveBeenCalledTimes(1);
  });

  it("reports a failure to write the migrated data (storage full)", () => {
    const storage = memoryStorage({ "flotilla.sidebar.collapsed": "true" });
    storage.setItem = () => {
      throw new DOMException("full", "QuotaExceededError");
    };
    const report = vi.fn();
    expect(runStorageMigrations({ storage, report }).status).toBe("failed");
    expect(report).toHaveBeenCalledTimes(1);
  });

  it("does not fail the boot when reporting fails", () => {
    const storage = memoryStorage({ "flotilla.x": "1" });
    const migrations: StorageMigration[] = [
      {
        version: 1,
        description: "broken",
        migrate: () => {
          throw new Error("x");
        },
      },
    ];
    const report = () => {
      throw new Error("no toasts");
    };
    expect(runStorageMigrations({ storage, migrations, report }).status).toBe("failed");
  });
});
