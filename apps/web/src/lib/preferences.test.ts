import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  BUILT_IN_PREFERENCE_DEFAULTS,
  getPreference,
  PREFERENCE_KEYS,
  setPreference,
  setPreferenceDefaults,
} from "./preferences.ts";

describe("preferences", () => {
  let items: Map<string, string>;
  beforeEach(() => {
    items = new Map();
    vi.stubGlobal("localStorage", {
      getItem: (key: string) => items.get(key) ?? null,
      setItem: (key: string, value: string) => void items.set(key, value),
      removeItem: (key: string) => void items.delete(key),
    });
  });
  afterEach(() => {
    setPreferenceDefaults({});
    vi.unstubAllGlobals();
  });

  it("uses the built-in defaults for what the user has not chosen", () => {
    expect(getPreference("displayApps")).toBe(false);
    expect(getPreference("sidebarCollapsed")).toBe(false);
    expect(BUILT_IN_PREFERENCE_DEFAULTS.colorMode).toBe("light");
  });

  it("takes the deployment's default (the displayApps feature flag), but the user's stored choice wins", () => {
    setPreferenceDefaults({ displayApps: true });
    expect(getPreference("displayApps")).toBe(true);
    setPreference("displayApps", false);
    expect(items.get(PREFERENCE_KEYS.displayApps)).toBe("false");
    expect(getPreference("displayApps")).toBe(false);
    items.delete(PREFERENCE_KEYS.displayApps);
    expect(getPreference("displayApps")).toBe(true);
  });

  it("ignores stored values of the wrong type", () => {
    items.set(PREFERENCE_KEYS.sidebarCollapsed, '"yes"');
    expect(getPreference("sidebarCollapsed")).toBe(false);
    items.set(PREFERENCE_KEYS.sidebarCollapsed, "{broken");
    expect(getPreference("sidebarCollapsed")).toBe(false);
  });
});
