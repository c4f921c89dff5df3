import { createThrottle } from "../../lib/throttle.ts";

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
 * `account` names the user however they logged in (`user:{id}`); an unknown login is its own key.
 */
export function createLoginThrottle({ maxFailures = 10, windowMs = 15 * 60 * 1000, maxFailuresPerAddress = 20 } = {}) {
  const perAccount = createThrottle({ max: maxFailures, windowMs });
  const perAccountAndAddress = createThrottle({ max: 1, windowMs });
  const perAddress = createThrottle({
    max: maxFailuresPerAddress,
    windowMs,
    message: "Too many failed logins from your address. Try again later.",
  });
  const pair = (account: string, address: string) => `${account} ${address}`;
  return {
    /** Before anything is looked up: the address's own limit. */
    checkAddress(address: string, now = Date.now()) {
      perAddress.check(address, now);
    },
    check(account: string, address: string, now = Date.now()) {
      perAddress.check(address, now);
      if (perAccount.reached(account, now)) perAccountAndAddress.check(pair(account, address), now);
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
  };
}
