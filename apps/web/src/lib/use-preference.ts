import { useCallback, useSyncExternalStore } from "react";
import {
  getPreference,
  getPreferenceDefaults,
  type Preferences,
  setPreference,
  subscribePreferences,
} from "./preferences.ts";

/** A preference (lib/preferences.ts) as React state: re-renders when it changes, here or in another tab. */
export function usePreference<K extends keyof Preferences>(key: K): [Preferences[K], (value: Preferences[K]) => void] {
  const value = useSyncExternalStore(
    subscribePreferences,
    () => getPreference(key),
    () => getPreferenceDefaults()[key],
  );
  const set = useCallback((next: Preferences[K]) => setPreference(key, next), [key]);
  return [value, set];
}
