/**
 * Command-line login (spec 1 §2.3, §5; security review 3, finding 2): the dashboard hands the
 * session token only to a callback on the user's own computer. Loopback is `localhost`, any
 * address of 127.0.0.0/8 and `::1`; anything else (a LAN address, a public one, a name that merely
 * starts with "localhost") is refused before anything is sent. The token then goes in the body
 * of a form POST, never in a URL.
 */

/** 127.0.0.0/8 as the WHATWG URL parser writes it (it has already turned `127.1` or `0x7f.1` into dotted quads). */
const LOOPBACK_IPV4 =
  /^127\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Is this URL hostname (as `new URL(…).hostname` gives it: lower case, IPv6 in brackets) loopback? */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || LOOPBACK_IPV4.test(host);
}

/** May the dashboard hand a session token to this command-line login callback? */
export function isLoopbackCallback(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  if (url.username || url.password) return false;
  return isLoopbackHost(url.hostname);
}

/**
 * The loopback hosts the dashboard's CSP lets a form post to (`form-action http://{host}:*`).
 * CSP host sources cannot name an IPv6 literal, and name IPv4 addresses one by one, so a CLI
 * listening on [::1] or another 127.0.0.0/8 address is loopback but out of the page's reach.
 */
export const CLI_CALLBACK_POST_HOSTS = ["localhost", "127.0.0.1"] as const;

/** Can the dashboard page post a token to this callback (loopback, and named by its CSP)? */
export function canPostToCliCallback(value: string): boolean {
  if (!isLoopbackCallback(value)) return false;
  const host = new URL(value).hostname.toLowerCase();
  return (CLI_CALLBACK_POST_HOSTS as readonly string[]).includes(host);
}
