import { PASSWORD_MAX_LENGTH } from "@flotilla/domain";
import { useSyncExternalStore } from "react";

/**
 * A password longer than 64 characters still logs in (older accounts), but prompts a change
 * (spec 1 §5): the login page raises this flag, the banner shows until the password changes.
 */
const KEY = "flotilla.passwordTooLong";
const listeners = new Set<() => void>();

export function notePasswordLength(password: string) {
  try {
    if (password.length > PASSWORD_MAX_LENGTH) sessionStorage.setItem(KEY, "1");
    else sessionStorage.removeItem(KEY);
  } catch {
    // No session storage: no banner.
  }
  for (const listener of listeners) listener();
}

const read = () => {
  try {
    return sessionStorage.getItem(KEY) === "1";
  } catch {
    return false;
  }
};

export function usePasswordTooLong(): boolean {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    read,
    () => false,
  );
}
