import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { type Readable, Transform } from "node:stream";
import ipaddr from "ipaddr.js";

/**
 * The one way the server fetches a URL a user gave it (DESIGN §12): SSH-key import, build from
 * URL, webhook deliveries (a POST). http(s) only; every address a name resolves to must be public (unicast) unless the
 * operator allows it (FLOTILLA_FETCH_ALLOW); the connection goes to the address that was checked
 * (the check is the socket's own DNS lookup, so a second answer cannot slip in between);
 * redirects are followed by hand, each one checked again; the whole exchange has a deadline and
 * the body a size bound. Every failure is an `OutboundFetchError` whose `detail` is for the log
 * only: callers answer the client with one text whatever went wrong, so the server cannot be
 * used to tell open ports, closed ports and internal hosts apart.
 */

export class OutboundFetchError extends Error {
  constructor(readonly detail: string) {
    super("The URL could not be fetched.");
    this.name = "OutboundFetchError";
  }
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** What the operator allows beyond public addresses: host names, and address ranges. */
export type FetchAllowList = { hosts: Set<string>; ranges: Range[] };

/** Reads FLOTILLA_FETCH_ALLOW's entries (validated at start): `host`, `addr` or `addr/bits`. */
export function fetchAllowList(entries: readonly string[]): FetchAllowList {
  const hosts = new Set<string>();
  const ranges: Range[] = [];
  for (const entry of entries) {
    if (entry.includes("/")) ranges.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry) && (entry.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(entry))) {
      const address = ipaddr.parse(entry);
      ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
    } else hosts.add(normalHost(entry));
  }
  return { hosts, ranges };
}

const normalHost = (host: string) => host.toLowerCase().replace(/\.$/, "");

/**
 * May the server connect to `address` (a resolved or literal IP) for `host`? Public unicast
 * addresses yes; anything else (loopback, private, link-local, multicast, unspecified,
 * reserved, carrier-grade NAT, NAT64/6to4/Teredo wrappers) only when the operator allows the
 * host by name or the address by range. IPv4-mapped IPv6 is judged as the IPv4 address it is.
 */
export function isPermittedAddress(address: string, host: string, allow: FetchAllowList): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (allow.hosts.has(normalHost(host))) return true;
  for (const [range, bits] of allow.ranges) {
    if (range.kind() === parsed.kind() && parsed.match(range, bits)) return true;
  }
  return parsed.range() === "unicast";
}

export type OutboundOptions = {
  allow: FetchAllowList;
  /** For the whole exchange, redirects and body included. */
  timeoutMs: number;
  maxBytes: number;
  accept?: string;
  /**
   * Origins the operator configured (e.g. FLOTILLA_REPOSITORY_API_URL): their own host is trusted
   * as configured, whatever it resolves to; a redirect elsewhere is checked like any URL.
   */
  trustedOrigins?: readonly string[];
  maxRedirects?: number;
  /** Sends a POST with this body and these headers instead of a GET (webhook deliveries). */
  post?: { body: string; headers: Record<string, string> };
};

export type OutboundResponse = {
  status: number;
  contentType: string;
  /** The body, bounded by `maxBytes` (the stream fails beyond it) and by the deadline. */
  body: Readable;
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DEFAULT_MAX_REDIRECTS = 3;

/** Opens `url` under the rules above; the caller reads (or discards) the body. */
export async function outboundFetch(url: string, options: OutboundOptions): Promise<OutboundResponse> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await requestOnce(current, options, signal);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || !location) {
      return {
        status: response.statusCode ?? 0,
        contentType: String(response.headers["content-type"] ?? ""),
        body: bounded(response, options.maxBytes),
      };
    }
    response.destroy();
    if (hop >= maxRedirects) throw new OutboundFetchError(`more than ${maxRedirects} redirects from ${url}`);
    try {
      current = new URL(location, current).toString();
    } catch {
      throw new OutboundFetchError(`unreadable redirect from ${current}: ${location.slice(0, 200)}`);
    }
  }
}

/** Reads the whole (bounded) body. */
export async function readBody(response: OutboundResponse): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response.body) chunks.push(chunk as Buffer);
  } catch (error) {
    throw error instanceof OutboundFetchError ? error : new OutboundFetchError(`body: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks);
}

function requestOnce(raw: string, options: OutboundOptions, signal: AbortSignal): Promise<http.IncomingMessage> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return Promise.reject(new OutboundFetchError(`not a URL: ${raw.slice(0, 200)}`));
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Promise.reject(new OutboundFetchError(`not http(s): ${url.protocol}`));
  }
  if (url.username || url.password) return Promise.reject(new OutboundFetchError("credentials in the URL"));
  // The WHATWG parser already turned 0x7f000001, 2130706433 and 0177.0.0.1 into 127.0.0.1.
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const trusted = options.trustedOrigins?.includes(url.origin) ?? false;
  const permitted = (address: string) => trusted || isPermittedAddress(address, host, options.allow);
  // A literal address is never looked up: it is checked here.
  if (net.isIP(host) && !permitted(host)) {
    return Promise.reject(new OutboundFetchError(`refused address ${host}`));
  }
  const lookup: net.LookupFunction = (hostname, lookupOptions, callback) => {
    dns.lookup(hostname, { all: true, family: lookupOptions.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const refused = addresses.find((each) => !permitted(each.address));
      if (refused || addresses.length === 0) {
        const detail = refused
          ? `${hostname} resolves to refused address ${refused.address}`
          : `${hostname}: no address`;
        return callback(Object.assign(new OutboundFetchError(detail), { code: "EREFUSEDADDRESS" }), "", 0);
      }
      if (lookupOptions.all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const [first] = addresses as [dns.LookupAddress];
      callback(null, first.address, first.family);
    });
  };
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: options.post ? "POST" : "GET",
        headers: {
          accept: options.accept ?? "*/*",
          "user-agent": "flotilla",
          "accept-encoding": "identity",
          ...options.post?.headers,
          ...(options.post && { "content-length": String(Buffer.byteLength(options.post.body)) }),
        },
        lookup,
        signal,
        // One socket per exchange: an agent's pooled socket could have been checked for another host.
        agent: false,
      },
      resolve,
    );
    request.on("error", (error) => {
      reject(
        error instanceof OutboundFetchError
          ? error
          : new OutboundFetchError(`${url.host}: ${(error as Error).message || (error as Error).name}`),
      );
    });
    request.end(options.post?.body);
  });
}

/** Passes at most `limit` bytes; beyond it (or by a Content-Length above it) the stream fails. */
function bounded(response: http.IncomingMessage, limit: number): Readable {
  const declared = Number(response.headers["content-length"]);
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(new OutboundFetchError(`body larger than ${limit} bytes`));
      else done(null, chunk);
    },
  });
  response.on("error", (error) =>
    counter.destroy(error instanceof OutboundFetchError ? error : new OutboundFetchError(`body: ${error.message}`)),
  );
  counter.on("close", () => response.destroy());
  if (Number.isFinite(declared) && declared > limit) {
    queueMicrotask(() => counter.destroy(new OutboundFetchError(`body of ${declared} bytes, above ${limit}`)));
    return counter;
  }
  return response.pipe(counter);
}
