import { errorCatalogue } from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import { createThrottle } from "../../lib/throttle.ts";

/** The lock of an account for an address: the spec's 429 text (spec 1 §8). */
export const ACCOUNT_LOCK_TEXT = errorCatalogue.too_many_requests.text;
/** The lock of an address, whatever the accounts it tried. */
export const ADDRESS_LOCK_TEXT = "Too many failed logins from your address. Try again later.";

/** How long a lock lasts, in words: "Try again in 14 minutes." (whole minutes, rounded up; seconds under one). */
export function lockDurationText(seconds: number): string {
  if (seconds < 60) return `Try again in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`;
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
}

/**
 * Repeated failed logins are answered 429 with Retry-After until the window passes, so passwords
 * cannot be guessed at speed: per account (10 failures in 15 minutes, well under the spec's 100 an
 * hour) and per client address (20 failures in 15 minutes, whatever the accounts tried; below the
 * route's 30 requests a minute, so a guesser cycling through accounts is stopped too).
 *
 * An account that reached its limit is closed only to the addresses that failed on it: anyone
 * could otherwise lock its owner out by failing ten times. An address that has not failed on it
 * may still try, and one failure closes the account to that address too, so guessing stays at one
 * try per address and window while the account is under attack.
 *
 * The 429's text is the spec's sentence, then how long the lock lasts ("… Try again in 14
 * minutes."). The owner is not stuck behind a lock for that long (security review 3, finding 3):
 * the login route lets the right password plus a right second factor through (auth/routes.ts),
 * and a completed password reset lifts the account's locks (`clearAccount`).
 *
 * `account` names the user however they logged in (`user:{id}`); an unknown login is its own key.
 */
export function createLoginThrottle({ maxFailures = 10, windowMs = 15 * 60 * 1000, maxFailuresPerAddress = 20 } = {}) {
  const perAccount = createThrottle({ max: maxFailures, windowMs });
  const perAccountAndAddress = createThrottle({ max: 1, windowMs });
  const perAddress = createThrottle({ max: maxFailuresPerAddress, windowMs });
  const pair = (account: string, address: string) => `${account} ${address}`;
  const lock = (text: string, seconds: number) =>
    new FlotillaError("too_many_requests", `${text} ${lockDurationText(seconds)}`, {
      headers: { "retry-after": String(seconds) },
    });
  const addressLock = (address: string, now: number) => {
    const seconds = perAddress.retryAfter(address, now);
    return seconds === undefined ? undefined : lock(ADDRESS_LOCK_TEXT, seconds);
  };
  const accountLock = (account: string, address: string, now: number) => {
    if (!perAccount.reached(account, now)) return undefined;
    const seconds = perAccountAndAddress.retryAfter(pair(account, address), now);
    return seconds === undefined ? undefined : lock(ACCOUNT_LOCK_TEXT, seconds);
  };
  const lockOf = (account: string, address: string, now: number) =>
    addressLock(address, now) ?? accountLock(account, address, now);
  return {
    /** The address's own lock (checked before anything is looked up), or undefined. */
    addressLock(address: string, now = Date.now()): FlotillaError | undefined {
      return addressLock(address, now);
    },
    /** What refuses this login: the address's lock, or the account's for this address; undefined if none. */
    lockOf(account: string, address: string, now = Date.now()): FlotillaError | undefined {
      return lockOf(account, address, now);
    },
    checkAddress(address: string, now = Date.now()) {
      const refused = addressLock(address, now);
      if (refused) throw refused;
    },
    check(account: string, address: string, now = Date.now()) {
      const refused = lockOf(account, address, now);
      if (refused) throw refused;
    },
    failed(account: string, address: string, now = Date.now()) {
      perAccount.hit(account, now);
      perAccountAndAddress.hit(pair(account, address), now);
      perAddress.hit(address, now);
    },
    /** The account's failures stand (they are someone else's, maybe); this address's are forgiven. */
    succeeded(account: string, address: string) {
      perAccountAndAddress.reset(pair(account, address));
    },
    /**
     * A completed password reset (the owner read the mail): the account's failures and its locks
     * for every address go. The addresses' own counts stay (they may have tried other accounts).
     */
    clearAccount(account: string) {
      perAccount.reset(account);
      perAccountAndAddress.resetPrefix(pair(account.trim().toLowerCase(), ""));
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
