import { createThrottle } from "../../lib/throttle.ts";

/**
 * Repeated failed logins are answered 429 with Retry-After until the window passes, so passwords
 * cannot be guessed at speed: per account (10 failures in 15 minutes, well under the spec's 100 an
 * hour) and per client address (20 failures in 15 minutes, whatever the accounts tried; below the
 * route's 30 requests a minute, so a guesser cycling through accounts is stopped too).
 */
export function createLoginThrottle({ maxFailures = 10, windowMs = 15 * 60 * 1000, maxFailuresPerAddress = 20 } = {}) {
  const perAccount = createThrottle({ max: maxFailures, windowMs });
  const perAddress = createThrottle({
    max: maxFailuresPerAddress,
    windowMs,
    message: "Too many failed logins from your address. Try again later.",
  });
  return {
    check(login: string, address: string, now = Date.now()) {
      perAddress.check(address, now);
      perAccount.check(login, now);
    },
    failed(login: string, address: string, now = Date.now()) {
      perAccount.hit(login, now);
      perAddress.hit(address, now);
    },
    succeeded(login: string) {
      perAccount.reset(login);
    },
  };
}
