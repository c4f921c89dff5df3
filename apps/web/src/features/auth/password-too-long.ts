import { PASSWORD_MAX_LENGTH } from "@flotilla/domain";

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

export const passwordTooLong = () => {
  try {
    return sessionStorage.getItem(KEY) === "1";
  } catch {
    return false;
  }
};

/** Calls `listener` when the flag may have changed (the banner's hook); free of React for the login page. */
export function subscribePasswordTooLong(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
