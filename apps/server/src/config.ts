import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_DEVICE_LOG_LINES, DEFAULT_VARIABLE_RULES, type VariableRules } from "@flotilla/domain";
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { type BillingIssuer, readBillingIssuer } from "./features/billing/issuer.ts";
import { actionsHostName } from "./features/os-updates/actions-host.ts";
import { issueCertificates, type ServerTls } from "./lib/certificates.ts";

/**
 * All configuration comes from environment variables, validated once at start.
 * A bad value stops the process with one line naming the variable and the problem.
 */

const port = z.coerce
  .number({ error: "must be a port number" })
  .int("must be a whole number")
  .min(0, "must be between 0 and 65535")
  .max(65535, "must be between 0 and 65535");

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

/** The support drawer's community links when the operator names none (balena's forums, as the help links). */
export const DEFAULT_SUPPORT_FORUM_URL = "https://forums.balena.io/";
export const DEFAULT_FEATURE_REQUESTS_URL = "https://forums.balena.io/c/product-support/feature-requests/";

/** OpenStreetMap's tile server: each map view sends the viewer's address to it (README). */
export const DEFAULT_MAP_TILES = "https://tile.openstreetmap.org/{z}/{x}/{y}.png";

/**
 * A tile URL template for the device map: http(s), with {z}, {x} and {y} in it ({s} for a
 * subdomain and {r} for retina are allowed); `none` for no tiles, so maps make no third-party requests.
 */
export function isMapTilesSetting(value: string): boolean {
  if (value === "none") return true;
  if (!["{z}", "{x}", "{y}"].every((part) => value.includes(part))) return false;
  if (/\{(?![zxysr]\})[^}]*\}/.test(value)) return false;
  try {
    const url = new URL(value.replaceAll("{s}", "a").replace(/\{[zxyr]\}/g, "0"));
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

/** The CSP source of a tile template's host: `https://*.tile.example.com` for `{s}.tile.example.com`. */
export function mapTilesSource(template: string): string {
  const url = new URL(template.replaceAll("{s}", "subdomain").replace(/\{[zxyr]\}/g, "0"));
  const host = template.includes("{s}.") ? url.host.replace(/^subdomain\./, "*.") : url.host;
  return `${url.protocol}//${host}`;
}

/** A comma-separated list of variable names or prefixes; `none` is the empty list. */
const nameList = z
  .string()
  .regex(
    /^(none|[A-Za-z][A-Za-z0-9_:]*(,[A-Za-z][A-Za-z0-9_:]*)*)$/,
    "must be a comma-separated list of names (letters, digits, _ and :, starting with a letter) or none",
  )
  .transform((value) => (value === "none" ? [] : value.split(",")));

/** `addr` or `addr/bits`, IPv4 or IPv6, as ipaddr.js reads them (strict dotted IPv4). */
const isAddressOrCidr = (item: string) =>
  ipaddr.IPv4.isValidFourPartDecimal(item) ||
  ipaddr.IPv4.isValidCIDRFourPartDecimal(item) ||
  (item.includes(":") && (ipaddr.IPv6.isValid(item) || ipaddr.IPv6.isValidCIDR(item)));

/** The proxies whose X-Forwarded-For is believed: addresses/CIDRs, or a hop count (`0`: none). */
const trustProxy = z
  .string()
  .refine(
    (value) => /^\d{1,2}$/.test(value) || value.split(",").every((item) => isAddressOrCidr(item.trim())),
    "must be a hop count (0-99) or a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.1,192.168.0.0/16)",
  )
  .transform((value): number | string[] =>
    /^\d+$/.test(value) ? Number(value) : value.split(",").map((item) => item.trim()),
  );

/** Hosts and CIDRs outbound fetches of user-supplied URLs may reach although they are not public. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/i;
const fetchAllow = z
  .string()
  .refine(
    (value) => value.split(",").every((item) => isAddressOrCidr(item.trim()) || HOST_NAME.test(item.trim())),
    "must be a comma-separated list of host names, addresses or CIDRs (e.g. git.internal,10.1.0.0/16)",
  )
  .transform((value) => value.split(",").map((item) => item.trim().toLowerCase()));

const flag = z.enum(["0", "1"], { error: "must be 0 or 1" });

/**
 * The DNS servers that domain verification asks (FLOTILLA_DNS_SERVERS): addresses with an
 * optional port, `1.1.1.1`, `127.0.0.1:5353`, `2606:4700::1111` or `[::1]:5353`, as node's
 * dns Resolver takes them. Unset: the system's resolvers.
 */
const DNS_SERVERS_ERROR =
  "must be a comma-separated list of DNS server addresses with an optional port (e.g. 1.1.1.1,127.0.0.1:5353,[::1]:53)";
const dnsServers = z.string().transform((value, context) => {
  const servers: string[] = [];
  for (const raw of value.split(",")) {
    const item = raw.trim();
    const bracketed = item.match(/^\[([^\]]+)\](?::(\d{1,5}))?$/);
    const v4 = item.match(/^([\d.]+)(?::(\d{1,5}))?$/);
    const [address, portText] = bracketed
      ? [bracketed[1] ?? "", bracketed[2]]
      : v4
        ? [v4[1] ?? "", v4[2]]
        : [item, undefined];
    const valid =
      (bracketed || !v4 ? ipaddr.IPv6.isValid(address) : ipaddr.IPv4.isValidFourPartDecimal(address)) &&
      (portText === undefined || (Number(portText) >= 1 && Number(portText) <= 65535));
    if (!valid) {
      context.addIssue({ code: "custom", message: DNS_SERVERS_ERROR });
      return z.NEVER;
    }
    const ipv6 = address.includes(":");
    servers.push(portText === undefined ? address : ipv6 ? `[${address}]:${portText}` : `${address}:${portText}`);
  }
  return servers;
});

/**
 * The image builder: a Docker Engine API (podman's `system service`, Docker, balena-engine) as a
 * unix socket (`unix:///run/podman/podman.sock` or a bare absolute path) or `tcp://`/`http://` host:port.
 */
const BUILDER_ERROR = "must be a Docker Engine API address: unix:///path/to/socket, /path/to/socket or tcp://host:port";
const builderAddress = z.string().transform((value, context) => {
  const socket = value.startsWith("unix://")
    ? value.slice("unix://".length)
    : value.startsWith("/")
      ? value
      : undefined;
  if (socket !== undefined) {
    if (socket.startsWith("/")) return { socketPath: socket };
  } else {
    try {
      const url = new URL(value.replace(/^tcp:/, "http:"));
      if ((url.protocol === "http:" || url.protocol === "https:") && url.hostname && /^\/?$/.test(url.pathname))
        return { url: `${url.protocol}//${url.host}` };
    } catch {}
  }
  context.addIssue({ code: "custom", message: BUILDER_ERROR });
  return z.NEVER;
});

/**
 * The image registry as devices and the CLI reach it: `host[:port]` (HTTPS, as docker and podman
 * assume) or an http(s) URL without a path. Image names start with its host (`host:port/v2/…`).
 */
const REGISTRY_ERROR =
  "must be host[:port] or an http(s) URL without a path, e.g. registry.example.com or http://127.0.0.1:5055";
const registryUrl = z.string().transform((value, context) => {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `https://${value}`;
  try {
    const url = new URL(withScheme);
    const bare = !url.username && !url.password && !url.search && !url.hash && /^\/?$/.test(url.pathname);
    if ((url.protocol === "http:" || url.protocol === "https:") && bare && url.hostname) {
      return { url: `${url.protocol}//${url.host}`, host: url.host };
    }
  } catch {}
  context.addIssue({ code: "custom", message: REGISTRY_ERROR });
  return z.NEVER;
});

const schema = z.object({
  FLOTILLA_PORT: port.default(8080),
  FLOTILLA_API_PORT: port.default(8081),
  FLOTILLA_SSH_PORT: port.optional(),
  FLOTILLA_SSH_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, "must be a host name or an IPv4 address, without a scheme or port")
    .optional(),
  FLOTILLA_VPN_PORT: port.min(1, "must be between 1 and 65535").optional(),
  FLOTILLA_VPN_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, "must be a host name or an IPv4 address, without a scheme or port")
    .optional(),
  FLOTILLA_VPN_SUBNET: z
    .string()
    .regex(
      /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(1[6-9]|2[0-4])$/,
      "must be an IPv4 network in CIDR notation with a prefix from /16 to /24, such as 10.240.0.0/16",
    )
    .default("10.240.0.0/16"),
  FLOTILLA_HOST: z.string().min(1).default("0.0.0.0"),
  FLOTILLA_PUBLIC_URL: httpUrl.optional(),
  FLOTILLA_API_URL: httpUrl.optional(),
  FLOTILLA_DATA_DIR: z.string().min(1, "must not be empty").default("./data"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/.+/, "must be a postgres:// or postgresql:// URL")
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number({ error: "must be a number" }).int().min(1).max(500).default(20),
  FLOTILLA_DEMO: flag.optional(),
  FLOTILLA_DEMO_DEVICES: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number from 0 to 100")
    .min(0, "must be a whole number from 0 to 100")
    .max(100, "must be a whole number from 0 to 100")
    .default(10),
  FLOTILLA_DEMO_BUSY_INTERVAL_MS: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number from 500 to 60000")
    .min(500, "must be a whole number from 500 to 60000")
    .max(60_000, "must be a whole number from 500 to 60000")
    .default(3000),
  FLOTILLA_DEMO_PASSWORD: z
    .string()
    .min(8, "must be at least 8 characters")
    .max(64, "must be at most 64 characters")
    .optional(),
  FLOTILLA_ADMIN_EMAIL: z.email("must be an email address").optional(),
  FLOTILLA_ADMIN_PASSWORD: z
    .string()
    .min(8, "must be at least 8 characters")
    .max(64, "must be at most 64 characters")
    .optional(),
  FLOTILLA_SECRET: z.string().min(32, "must be at least 32 bytes long").optional(),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/.+/, "must be an smtp:// or smtps:// URL")
    .optional(),
  SMTP_FROM: z
    .string()
    .regex(/^([^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/, 'must be an address, or "Name <address>"')
    .optional(),
  FLOTILLA_CAPTCHA: z.enum(["pow", "recaptcha", "off"], { error: "must be pow, recaptcha or off" }).default("pow"),
  RECAPTCHA_SITE_KEY: z.string().min(1).optional(),
  RECAPTCHA_SECRET_KEY: z.string().min(1).optional(),
  RECAPTCHA_VERIFY_URL: httpUrl.default("https://www.google.com/recaptcha/api/siteverify"),
  FLOTILLA_EMAIL_VERIFICATION: z
    .enum(["required", "optional"], { error: "must be required or optional" })
    .default("required"),
  FLOTILLA_DEVICE_URLS_BASE_DOMAIN: z
    .string()
    .regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i, "must be a domain name such as devices.example.com")
    .default("devices.localhost"),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/.+/, "must be a redis:// or rediss:// URL")
    .optional(),
  FLOTILLA_WORKERS: z.coerce
    .number({ error: "must be a number of processes" })
    .int("must be a whole number of processes")
    .min(1, "must be at least 1")
    .max(64, "must be at most 64")
    .optional(),
  FLOTILLA_DEVICE_LOG_LINES: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number from 1 to 100000")
    .min(1, "must be a whole number from 1 to 100000")
    .max(100_000, "must be a whole number from 1 to 100000")
    .default(DEFAULT_DEVICE_LOG_LINES),
  FLOTILLA_DEVICE_LOG_RETENTION_DAYS: z.coerce
    .number({ error: "must be a number of days" })
    .int("must be a whole number of days from 1 to 36500")
    .min(1, "must be a whole number of days from 1 to 36500")
    .max(36_500, "must be a whole number of days from 1 to 36500")
    .default(30),
  FLOTILLA_DEVICE_LOG_HEARTBEAT_SECONDS: z.coerce
    .number({ error: "must be a number" })
    .positive("must be a number of seconds from 0.1 to 300")
    .min(0.1, "must be a number of seconds from 0.1 to 300")
    .max(300, "must be a number of seconds from 0.1 to 300")
    .default(15),
  FLOTILLA_DEVICE_ACTIONS_HOST: z.string().min(1).optional(),
  FLOTILLA_WEB_DIST: z.string().min(1).optional(),
  FLOTILLA_STATUS_PAGE_URL: httpUrl.optional(),
  FLOTILLA_SUPPORT_FORUM_URL: httpUrl.default(DEFAULT_SUPPORT_FORUM_URL),
  FLOTILLA_FEATURE_REQUESTS_URL: httpUrl.default(DEFAULT_FEATURE_REQUESTS_URL),
  FLOTILLA_DOCS_SEARCH_URL: httpUrl
    .refine(
      (value) => value.includes("{query}"),
      "must be a URL template with {query}, such as https://docs.example.com/search?q={query}",
    )
    .optional(),
  FLOTILLA_MAP_TILES: z
    .string()
    .refine(isMapTilesSetting, "must be a tile URL template such as https://tiles.example.com/{z}/{x}/{y}.png, or none")
    .default(DEFAULT_MAP_TILES),
  FLOTILLA_REPOSITORY_API_URL: httpUrl.default("https://api.github.com"),
  FLOTILLA_REPOSITORY_RAW_URL: httpUrl.default("https://raw.githubusercontent.com"),
  FLOTILLA_FEATURE_FLAGS: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+(,[a-zA-Z0-9_-]+)*$/, "must be a comma-separated list of flag names")
    .optional(),
  FLOTILLA_VARIABLE_RESERVED_NAMES: nameList.optional(),
  FLOTILLA_VARIABLE_RESERVED_NAMESPACES: nameList.optional(),
  FLOTILLA_VARIABLE_WHITELISTED_NAMES: nameList.optional(),
  FLOTILLA_VARIABLE_WHITELISTED_NAMESPACES: nameList.optional(),
  FLOTILLA_VARIABLE_BLACKLISTED_NAMES: nameList.optional(),
  FLOTILLA_TRUST_PROXY: trustProxy.optional(),
  FLOTILLA_FETCH_ALLOW: fetchAllow.optional(),
  FLOTILLA_DNS_SERVERS: dnsServers.optional(),
  FLOTILLA_REGISTRY_URL: registryUrl.optional(),
  FLOTILLA_REGISTRY_KEY: z.string().min(1).optional(),
  FLOTILLA_REGISTRY_CERT: z.string().min(1).optional(),
  FLOTILLA_REGISTRY_MIRROR: flag.optional(),
  FLOTILLA_DEVICE_CA: z.string().min(1).optional(),
  FLOTILLA_TLS: z
    .enum(["generate"], {
      error:
        "must be generate (a CA and certificate made in the data directory); for your own, set FLOTILLA_TLS_CERT and FLOTILLA_TLS_KEY",
    })
    .optional(),
  FLOTILLA_TLS_CERT: z.string().min(1).optional(),
  FLOTILLA_TLS_KEY: z.string().min(1).optional(),
  FLOTILLA_OS_IMAGES_DIR: z.string().min(1).optional(),
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_\w+$/, "must be a Stripe secret key (sk_test_…, sk_live_…)")
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\w+$/, "must be a Stripe webhook signing secret (whsec_…)")
    .optional(),
  STRIPE_API_URL: httpUrl.optional(),
  STRIPE_PUBLISHABLE_KEY: z
    .string()
    .regex(/^pk_(test|live)_\w+$/, "must be a Stripe publishable key (pk_test_…, pk_live_…)")
    .optional(),
  FLOTILLA_SALES_URL: z
    .string()
    .regex(/^(https?:\/\/|mailto:)\S+$/, "must be an http(s) URL or a mailto: address")
    .optional(),
  FLOTILLA_BUILDER: builderAddress.optional(),
  FLOTILLA_OAUTH_GITHUB_CLIENT_ID: z.string().min(1).optional(),
  FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  FLOTILLA_OAUTH_GITHUB_URL: httpUrl.default("https://github.com"),
  FLOTILLA_OAUTH_GITHUB_API_URL: httpUrl.default("https://api.github.com"),
  FLOTILLA_SUPPORT_PORTAL_URL: httpUrl.optional(),
  FLOTILLA_SUPPORT_PORTAL_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  FLOTILLA_CHAT_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  FLOTILLA_SUPPORT_TICKET_FIELDS: z.string().min(1).optional(),
  ZENDESK_URL: httpUrl.optional(),
  ZENDESK_EMAIL: z.email("must be an email address").optional(),
  ZENDESK_API_TOKEN: z.string().min(8, "must be at least 8 characters").optional(),
  FLOTILLA_RATE_LIMIT: z.coerce.number({ error: "must be a number" }).int().min(1).default(1000),
  FLOTILLA_AUDIT_RETENTION_DAYS: z.coerce
    .number({ error: "must be a number of days" })
    .int("must be a whole number of days")
    .min(1, "must be at least 1 day")
    .max(36_500, "must be at most 36500 days")
    .default(365),
  FLOTILLA_WEBHOOK_RETRY_BASE_MS: z.coerce
    .number({ error: "must be a number of milliseconds" })
    .int("must be a whole number of milliseconds")
    .min(100, "must be at least 100 milliseconds")
    .max(3_600_000, "must be at most 3600000 milliseconds (1 hour)")
    .default(30_000),
  LOG_FORMAT: z.enum(["pretty", "json"], { error: "must be pretty or json" }).optional(),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], {
      error: "must be one of fatal, error, warn, info, debug, trace, silent",
    })
    .default("info"),
});

export type Config = {
  dashboardPort: number;
  apiPort: number;
  /** The SSH gateway's port (balena ssh, FLOTILLA_SSH_PORT); undefined: no gateway. */
  sshPort: number | undefined;
  /** The host name users reach the SSH gateway at (git remotes; FLOTILLA_SSH_HOST, else the API URL's). */
  sshHost: string;
  /**
   * The device VPN (features/vpn, FLOTILLA_VPN_*): the port balenaOS devices connect to, the host
   * name config.json gives them, and the network their addresses come from. Undefined: no VPN.
   */
  vpn: { port: number; host: string; subnet: string } | undefined;
  host: string;
  publicUrl: string;
  apiUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  demo: boolean;
  demoPassword: string | undefined;
  /** Simulated devices the demo runs in demo-fleet (0 = none). */
  demoDevices: number;
  /** Report interval of a demo device while it provisions or installs a release (one step each). */
  demoBusyIntervalMs: number;
  admin: { email: string; password: string } | undefined;
  secret: string | undefined;
  smtpUrl: string | undefined;
  /** The From of outgoing mail. */
  mailFrom: string;
  captcha: "pow" | "recaptcha" | "off";
  recaptcha: { siteKey: string; secretKey: string; verifyUrl: string } | undefined;
  emailVerification: "required" | "optional";
  /** A device's public URL is https://{uuid}.{deviceUrlsBaseDomain} (spec 2 §2 Device pages). */
  deviceUrlsBaseDomain: string;
  /** Shared heartbeat times and cross-instance cloudlink relays when several API instances run. */
  redisUrl: string | undefined;
  /**
   * Worker processes of this instance, sharing its ports (main.ts): FLOTILLA_WORKERS, by default
   * one per core with PostgreSQL and Redis (the workers share devices through Redis as instances
   * do), else 1.
   */
  workers: number;
  /** Log lines kept per device in PostgreSQL (older ones are pruned). */
  deviceLogLines: number;
  /**
   * The certificates (PEM) a device must trust to reach this server, handed to balenaOS devices
   * base64-encoded as config.json's `balenaRootCA`: the generated CA (FLOTILLA_TLS=generate)
   * followed by FLOTILLA_DEVICE_CA (a private CA behind the API's TLS, or one more for the
   * registry). Undefined: devices trust the public CAs only.
   */
  deviceCa: string | undefined;
  /**
   * The API port's own TLS (FLOTILLA_TLS_CERT/_KEY, or FLOTILLA_TLS=generate); undefined: plain
   * HTTP, as behind a TLS-terminating proxy. The files are checked (or generated) at start.
   */
  tls: ServerTls | undefined;
  /**
   * The directory of balenaOS images the operator provides (FLOTILLA_OS_IMAGES_DIR), one file per
   * device type and version as `<device-type>/<version>.img`: served configured by "Add device"
   * and `GET /download` (features/os-images). Undefined: no images on this server.
   */
  osImagesDir: string | undefined;
  /** Device log lines older than this (device time) are pruned; organizations may keep less (docs/logs.md). */
  deviceLogRetentionDays: number;
  /** An empty line goes to idle log streams this often, so proxies keep them open. */
  deviceLogHeartbeatMs: number;
  deviceActionsHost: string | undefined;
  webDist: string;
  /** A status page's JSON summary (statuspage.io `/api/v2/summary.json` shape) shown in the dashboard. */
  statusPageUrl: string | undefined;
  /** The support drawer's community forum and feature-request links (spec 3 §2 Support drawer). */
  supportForumUrl: string;
  featureRequestsUrl: string;
  /** The support drawer's docs search: a URL template with `{query}`; undefined: no search box. */
  docsSearchUrl: string | undefined;
  /** The device map's tile URL template; undefined (FLOTILLA_MAP_TILES=none) for no tiles. */
  mapTiles: string | undefined;
  /** Repository host for deploy-with-button: its API (default branch) and raw file URLs. */
  repositoryApiUrl: string;
  repositoryRawUrl: string;
  /** Feature flags (experiments) switched on for every dashboard. */
  featureFlags: string[];
  rateLimitPerMinute: number;
  /** Audit log entries older than this are pruned (docs/audit-and-webhooks.md). */
  auditRetentionDays: number;
  /** The first retry of a failed webhook delivery, doubling after (tests shorten it). */
  webhookRetryBaseMs: number;
  /**
   * Whose X-Forwarded-For to believe for the client address (rate limits, login throttles, audit
   * records): nobody (false, the default), a hop count, or the proxies' addresses/CIDRs.
   */
  trustProxy: false | number | string[];
  /** Host names, addresses and CIDRs that fetches of user-supplied URLs may reach though not public. */
  fetchAllow: string[];
  /** The DNS servers domain verification asks (FLOTILLA_DNS_SERVERS); undefined: the system's. */
  dnsServers: string[] | undefined;
  /**
   * The image registry (FLOTILLA_REGISTRY_URL) whose token auth this server answers: `url` to call
   * it, `host` to name images; the token-signing key and certificate as PEM file paths, or
   * undefined to generate them into the data directory. Undefined: no registry.
   */
  registry: { url: string; host: string; keyFile: string | undefined; certFile: string | undefined } | undefined;
  /**
   * The Docker Engine API that builds `build:` services and pushes images to the registry
   * (FLOTILLA_BUILDER); `mirror` also copies `image:` services into the registry. Undefined: no builds.
   */
  builder: { engine: { socketPath: string } | { url: string }; mirror: boolean } | undefined;
  /** Where the dashboard's "Contact sales" buttons lead (the operator's sales contact): FLOTILLA_SALES_URL, else the platform administrator's address. */
  salesUrl: string | undefined;
  /** Stripe as the payment provider (STRIPE_SECRET_KEY); undefined: the built-in test provider. */
  stripe:
    | { secretKey: string; publishableKey: string; webhookSecret: string | undefined; apiUrl: string | undefined }
    | undefined;
  /** Variable name rules (spec 2 §5 "Variables"): the domain's defaults unless configured. */
  variableRules: VariableRules;
  /** Social sign-in providers (FLOTILLA_OIDC_<NAME>_*, FLOTILLA_OAUTH_GITHUB_*), in a stable order. */
  socialProviders: SocialProvider[];
  /**
   * The support portal's JWT single sign-on (Zendesk's shape): its sign-in URL and the shared
   * secret the tokens are signed with. Undefined: no support-portal handoff.
   */
  supportPortal: { url: string; secret: string } | undefined;
  /** The chat widget's identity-verification secret (Intercom's `user_hash`). */
  chatSecret: string | undefined;
  /**
   * The custom fields of the support ticket form (FLOTILLA_SUPPORT_TICKET_FIELDS, a JSON file);
   * undefined: the default "Affected fleet or device" field. Subject, description and priority are always there.
   */
  supportTicketFields: SupportTicketField[] | undefined;
  /** The seller on invoices (FLOTILLA_BILLING_ISSUER_*), copied onto each invoice when it is issued. */
  billingIssuer: BillingIssuer;
  /** Zendesk's Tickets API (ZENDESK_URL, ZENDESK_EMAIL, ZENDESK_API_TOKEN): tickets go there; undefined: kept here. */
  zendesk: { url: string; email: string; apiToken: string } | undefined;
  logLevel: string;
  /** LOG_FORMAT: readable lines in a terminal, JSON lines otherwise (lib/logger.ts). */
  logFormat: "pretty" | "json";
};

/** A custom field of the support ticket form (Zendesk's ticket field shape, spec 3 §3). */
export type SupportTicketField = z.infer<typeof supportTicketField>;
const supportTicketField = z
  .object({
    id: z
      .number()
      .int()
      .min(100, "must be at least 100 (lower ids are the form's own fields)")
      .max(Number.MAX_SAFE_INTEGER),
    type: z.enum(["text", "textarea", "tagger", "checkbox", "integer", "date"]),
    title_in_portal: z.string().trim().min(1).max(200),
    description: z.string().max(1000).optional(),
    required_in_portal: z.boolean().default(false),
    options: z
      .array(z.object({ name: z.string().min(1).max(200), value: z.string().min(1).max(200) }).strict())
      .max(200)
      .optional(),
  })
  .strict()
  .refine((field) => (field.type === "tagger") === (field.options !== undefined && field.options.length > 0), {
    message: "a tagger field needs options, other fields have none",
  });
const supportTicketFields = z
  .array(supportTicketField)
  .max(50)
  .refine((fields) => new Set(fields.map((field) => field.id)).size === fields.length, {
    message: "field ids must be unique",
  });

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----/;

/** FLOTILLA_WORKERS, checked against what several processes need; the default is one per core when they have it. */
function workersOf(e: z.infer<typeof schema>): number {
  const wanted = e.FLOTILLA_WORKERS;
  if (wanted === undefined) return e.DATABASE_URL && e.REDIS_URL ? os.availableParallelism() : 1;
  if (wanted > 1 && !e.DATABASE_URL) {
    throw new ConfigError(
      `Invalid FLOTILLA_WORKERS=${JSON.stringify(String(wanted))}: the embedded database admits one process; set DATABASE_URL for more workers`,
    );
  }
  if (wanted > 1 && !e.REDIS_URL) {
    throw new ConfigError(
      `Invalid FLOTILLA_WORKERS=${JSON.stringify(String(wanted))}: workers share device connections, heartbeats and relays through Redis; set REDIS_URL for more workers`,
    );
  }
  return wanted;
}

/** FLOTILLA_DEVICE_CA: a PEM file of one or more certificates, read and checked at start. */
function readDeviceCa(file: string): string {
  let pem: string;
  try {
    pem = fs.readFileSync(path.resolve(file), "utf8");
  } catch (error) {
    throw new ConfigError(
      `Invalid FLOTILLA_DEVICE_CA=${JSON.stringify(file)}: not a readable file (${(error as Error).message})`,
    );
  }
  if (!PEM_CERTIFICATE.test(pem) || /PRIVATE KEY-----/.test(pem)) {
    throw new ConfigError(
      `Invalid FLOTILLA_DEVICE_CA=${JSON.stringify(file)}: must be a PEM file of CA certificates (-----BEGIN CERTIFICATE-----), without a private key`,
    );
  }
  return pem;
}

/**
 * The names the generated server certificate covers: the API URL's host, the device actions
 * host (answered on the same port), loopback, and the listening address when it is one.
 */
function serverNames(e: z.infer<typeof schema>, apiUrl: string): string[] {
  const actionsHost = actionsHostName({
    deviceActionsHost: e.FLOTILLA_DEVICE_ACTIONS_HOST,
    deviceUrlsBaseDomain: e.FLOTILLA_DEVICE_URLS_BASE_DOMAIN,
  });
  const listening = ["0.0.0.0", "::"].includes(e.FLOTILLA_HOST) ? [] : [e.FLOTILLA_HOST];
  return [new URL(apiUrl).hostname, actionsHost, "localhost", "127.0.0.1", "::1", ...listening];
}

/** FLOTILLA_TLS=generate: the CA and server certificate in the data directory, made or renewed now. */
function generateServerTls(dir: string, names: string[]): ServerTls {
  try {
    const issued = issueCertificates(dir, names);
    return { certFile: issued.certFile, keyFile: issued.keyFile, caFile: issued.caFile, generated: { dir, names } };
  } catch (error) {
    throw new ConfigError(
      `Invalid FLOTILLA_TLS="generate": cannot make the certificates in ${dir} (${(error as Error).message})`,
    );
  }
}

/**
 * FLOTILLA_TLS_CERT and FLOTILLA_TLS_KEY: PEM files of the server certificate (with its chain)
 * and its private key, read and checked at start; an expired certificate is refused, as every
 * client would refuse it.
 */
function readServerTls(certFile: string, keyFile: string): { certFile: string; keyFile: string } {
  const read = (name: string, file: string) => {
    try {
      return fs.readFileSync(path.resolve(file), "utf8");
    } catch (error) {
      throw new ConfigError(
        `Invalid ${name}=${JSON.stringify(file)}: not a readable file (${(error as Error).message})`,
      );
    }
  };
  const certPem = read("FLOTILLA_TLS_CERT", certFile);
  const keyPem = read("FLOTILLA_TLS_KEY", keyFile);
  let certificate: crypto.X509Certificate;
  try {
    certificate = new crypto.X509Certificate(certPem);
  } catch {
    throw new ConfigError(
      `Invalid FLOTILLA_TLS_CERT=${JSON.stringify(certFile)}: must be a PEM file of the server certificate (-----BEGIN CERTIFICATE-----), then any intermediate ones`,
    );
  }
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey(keyPem);
  } catch {
    throw new ConfigError(
      `Invalid FLOTILLA_TLS_KEY=${JSON.stringify(keyFile)}: must be a PEM file of an unencrypted private key (-----BEGIN PRIVATE KEY-----)`,
    );
  }
  if (!certificate.checkPrivateKey(key)) {
    throw new ConfigError(
      `Invalid FLOTILLA_TLS_KEY=${JSON.stringify(keyFile)}: not the key of the certificate in FLOTILLA_TLS_CERT (the certificate must come first in its file)`,
    );
  }
  if (new Date(certificate.validTo).getTime() < Date.now()) {
    throw new ConfigError(
      `Invalid FLOTILLA_TLS_CERT=${JSON.stringify(certFile)}: the certificate expired on ${new Date(certificate.validTo).toISOString()}`,
    );
  }
  return { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile) };
}

/**
 * FLOTILLA_OS_IMAGES_DIR: a readable directory, checked at start, and mtools' `mcopy` on the PATH
 * (it writes config.json into an image's boot partition).
 */
function readOsImagesDir(dir: string, env: NodeJS.ProcessEnv): string {
  const resolved = path.resolve(dir);
  try {
    if (!fs.statSync(resolved).isDirectory()) throw new Error("not a directory");
    fs.accessSync(resolved, fs.constants.R_OK | fs.constants.X_OK);
  } catch (error) {
    throw new ConfigError(
      `Invalid FLOTILLA_OS_IMAGES_DIR=${JSON.stringify(dir)}: not a readable directory (${(error as Error).message})`,
    );
  }
  if (!onPath("mcopy", env.PATH ?? process.env.PATH)) {
    throw new ConfigError(
      `Invalid FLOTILLA_OS_IMAGES_DIR=${JSON.stringify(dir)}: configuring images needs mtools' mcopy on the PATH (Debian: apt-get install mtools)`,
    );
  }
  return resolved;
}

/** Is `command` an executable file in one of the PATH's directories? */
function onPath(command: string, searchPath: string | undefined): boolean {
  return (searchPath ?? "").split(path.delimiter).some((dir) => {
    if (!dir) return false;
    try {
      fs.accessSync(path.join(dir, command), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** FLOTILLA_SUPPORT_TICKET_FIELDS: a JSON file with an array of fields, read and checked at start. */
function readSupportTicketFields(file: string): SupportTicketField[] {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(path.resolve(file), "utf8"));
  } catch (error) {
    throw new ConfigError(
      `Invalid FLOTILLA_SUPPORT_TICKET_FIELDS=${JSON.stringify(file)}: not a readable JSON file (${(error as Error).message})`,
    );
  }
  const parsed = supportTicketFields.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      `Invalid FLOTILLA_SUPPORT_TICKET_FIELDS=${JSON.stringify(file)}: ${issue?.path.join(".") || "fields"}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}

/**
 * A social sign-in provider. `slug` names it in `/auth/{slug}` and in `social_service_account.provider`.
 * `oidc`: an OpenID Connect provider found by discovery at `issuer`; `github`: GitHub's plain
 * OAuth 2.0 (no discovery, no id_token), its web host at `webUrl` and REST API at `apiUrl`.
 */
export type SocialProvider =
  | { kind: "oidc"; slug: string; name: string; issuer: string; clientId: string; clientSecret: string }
  | {
      kind: "github";
      slug: "github";
      name: string;
      clientId: string;
      clientSecret: string;
      webUrl: string;
      apiUrl: string;
    };

export class ConfigError extends Error {}

const OIDC_VARIABLE = /^FLOTILLA_OIDC_([A-Z0-9_]+?)_(ISSUER|CLIENT_ID|CLIENT_SECRET|NAME)$/;
/** Slugs taken by other routes under /auth (or other sign-in methods). */
const RESERVED_SLUGS = new Set(["github", "saml", "providers", "v1"]);

/**
 * FLOTILLA_OIDC_<NAME>_{ISSUER,CLIENT_ID,CLIENT_SECRET,NAME}: one provider per NAME (letters,
 * digits, `_`), its slug NAME in lowercase with `-` for `_`. ISSUER, CLIENT_ID and CLIENT_SECRET
 * are required together; NAME (the button's text) defaults to the NAME part.
 */
function oidcProviders(env: NodeJS.ProcessEnv): SocialProvider[] {
  const byName = new Map<string, Partial<Record<"ISSUER" | "CLIENT_ID" | "CLIENT_SECRET" | "NAME", string>>>();
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith("FLOTILLA_OIDC_") || value === undefined || value === "") continue;
    const match = key.match(OIDC_VARIABLE);
    if (!match) {
      throw new ConfigError(
        `Invalid ${key}: not a provider setting (FLOTILLA_OIDC_<NAME>_ISSUER, _CLIENT_ID, _CLIENT_SECRET or _NAME, NAME in capitals, digits and _)`,
      );
    }
    const [, name = "", part = ""] = match;
    byName.set(name, { ...byName.get(name), [part]: value });
  }
  const providers: SocialProvider[] = [];
  for (const [name, settings] of [...byName].sort(([a], [b]) => a.localeCompare(b))) {
    for (const part of ["ISSUER", "CLIENT_ID", "CLIENT_SECRET"] as const) {
      if (!settings[part]) {
        throw new ConfigError(`Invalid FLOTILLA_OIDC_${name}_${part}: must be set when FLOTILLA_OIDC_${name}_* is set`);
      }
    }
    const issuer = settings.ISSUER ?? "";
    if (!httpUrl.safeParse(issuer).success) {
      throw new ConfigError(`Invalid FLOTILLA_OIDC_${name}_ISSUER=${JSON.stringify(issuer)}: must be an http(s) URL`);
    }
    const slug = name.toLowerCase().replaceAll("_", "-");
    if (RESERVED_SLUGS.has(slug)) {
      throw new ConfigError(
        `Invalid FLOTILLA_OIDC_${name}_ISSUER: the provider name ${name} is reserved (${[...RESERVED_SLUGS].join(", ")})`,
      );
    }
    providers.push({
      kind: "oidc",
      slug,
      name: settings.NAME ?? name.charAt(0) + name.slice(1).toLowerCase().replaceAll("_", " "),
      issuer: trimSlash(issuer),
      clientId: settings.CLIENT_ID ?? "",
      clientSecret: settings.CLIENT_SECRET ?? "",
    });
  }
  return providers;
}

const trimSlash = (url: string) => url.replace(/\/+$/, "");

/** Reads the configuration; throws ConfigError with a one-line message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable counts as unset, so `FOO= npm start` behaves like no FOO.
  const present = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => key in schema.shape && value !== undefined && value !== ""),
  );
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? "configuration");
    throw new ConfigError(
      `Invalid ${name}=${JSON.stringify(present[name] ?? "")}: ${issue?.message ?? "invalid value"}`,
    );
  }
  const e = parsed.data;
  if (e.FLOTILLA_ADMIN_EMAIL && !e.FLOTILLA_ADMIN_PASSWORD) {
    throw new ConfigError("Invalid FLOTILLA_ADMIN_PASSWORD: must be set when FLOTILLA_ADMIN_EMAIL is set");
  }
  if (e.FLOTILLA_ADMIN_PASSWORD && !e.FLOTILLA_ADMIN_EMAIL) {
    throw new ConfigError("Invalid FLOTILLA_ADMIN_EMAIL: must be set when FLOTILLA_ADMIN_PASSWORD is set");
  }
  if (e.FLOTILLA_CAPTCHA === "recaptcha" && !(e.RECAPTCHA_SITE_KEY && e.RECAPTCHA_SECRET_KEY)) {
    throw new ConfigError('Invalid FLOTILLA_CAPTCHA="recaptcha": needs RECAPTCHA_SITE_KEY and RECAPTCHA_SECRET_KEY');
  }
  if (Boolean(e.FLOTILLA_REGISTRY_KEY) !== Boolean(e.FLOTILLA_REGISTRY_CERT)) {
    const missing = e.FLOTILLA_REGISTRY_KEY ? "FLOTILLA_REGISTRY_CERT" : "FLOTILLA_REGISTRY_KEY";
    throw new ConfigError(`Invalid ${missing}: FLOTILLA_REGISTRY_KEY and FLOTILLA_REGISTRY_CERT are set together`);
  }
  if (e.FLOTILLA_BUILDER && !e.FLOTILLA_REGISTRY_URL) {
    throw new ConfigError(
      "Invalid FLOTILLA_REGISTRY_URL: must be set when FLOTILLA_BUILDER is set (built images go there)",
    );
  }
  if (e.FLOTILLA_REGISTRY_MIRROR === "1" && !e.FLOTILLA_BUILDER) {
    throw new ConfigError(
      "Invalid FLOTILLA_BUILDER: must be set when FLOTILLA_REGISTRY_MIRROR=1 (it copies the images)",
    );
  }
  // The spec's text for an incomplete billing provider (spec 1 §8). The dashboard's card form is
  // Stripe's own, so it needs the publishable key as much as the server needs the secret one.
  if ((e.STRIPE_WEBHOOK_SECRET || e.STRIPE_API_URL || e.STRIPE_PUBLISHABLE_KEY) && !e.STRIPE_SECRET_KEY) {
    throw new ConfigError("Invalid STRIPE_SECRET_KEY: Missing billing provider configuration parameters");
  }
  if (e.STRIPE_SECRET_KEY && !e.STRIPE_PUBLISHABLE_KEY) {
    throw new ConfigError("Invalid STRIPE_PUBLISHABLE_KEY: Missing billing provider configuration parameters");
  }
  if (e.FLOTILLA_REGISTRY_KEY && !e.FLOTILLA_REGISTRY_URL) {
    throw new ConfigError("Invalid FLOTILLA_REGISTRY_URL: must be set when FLOTILLA_REGISTRY_KEY is set");
  }
  if (Boolean(e.FLOTILLA_OAUTH_GITHUB_CLIENT_ID) !== Boolean(e.FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET)) {
    const missing = e.FLOTILLA_OAUTH_GITHUB_CLIENT_ID
      ? "FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET"
      : "FLOTILLA_OAUTH_GITHUB_CLIENT_ID";
    throw new ConfigError(
      `Invalid ${missing}: FLOTILLA_OAUTH_GITHUB_CLIENT_ID and FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET are set together`,
    );
  }
  if (Boolean(e.FLOTILLA_SUPPORT_PORTAL_URL) !== Boolean(e.FLOTILLA_SUPPORT_PORTAL_SECRET)) {
    const missing = e.FLOTILLA_SUPPORT_PORTAL_URL ? "FLOTILLA_SUPPORT_PORTAL_SECRET" : "FLOTILLA_SUPPORT_PORTAL_URL";
    throw new ConfigError(
      `Invalid ${missing}: FLOTILLA_SUPPORT_PORTAL_URL and FLOTILLA_SUPPORT_PORTAL_SECRET are set together`,
    );
  }
  const zendeskParts = ["ZENDESK_URL", "ZENDESK_EMAIL", "ZENDESK_API_TOKEN"] as const;
  const zendeskSet = zendeskParts.filter((name) => e[name]);
  if (zendeskSet.length > 0 && zendeskSet.length < zendeskParts.length) {
    const missing = zendeskParts.find((name) => !e[name]);
    throw new ConfigError(`Invalid ${missing}: ZENDESK_URL, ZENDESK_EMAIL and ZENDESK_API_TOKEN are set together`);
  }
  const socialProviders = oidcProviders(env);
  if (e.FLOTILLA_OAUTH_GITHUB_CLIENT_ID && e.FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET) {
    socialProviders.push({
      kind: "github",
      slug: "github",
      name: "GitHub",
      clientId: e.FLOTILLA_OAUTH_GITHUB_CLIENT_ID,
      clientSecret: e.FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET,
      webUrl: trimSlash(e.FLOTILLA_OAUTH_GITHUB_URL),
      apiUrl: trimSlash(e.FLOTILLA_OAUTH_GITHUB_API_URL),
    });
  }
  if (e.FLOTILLA_SSH_PORT && [e.FLOTILLA_PORT, e.FLOTILLA_API_PORT].includes(e.FLOTILLA_SSH_PORT)) {
    throw new ConfigError(
      `Invalid FLOTILLA_SSH_PORT=${JSON.stringify(String(e.FLOTILLA_SSH_PORT))}: must differ from FLOTILLA_PORT and FLOTILLA_API_PORT`,
    );
  }
  if (Boolean(e.FLOTILLA_TLS_CERT) !== Boolean(e.FLOTILLA_TLS_KEY)) {
    const missing = e.FLOTILLA_TLS_CERT ? "FLOTILLA_TLS_KEY" : "FLOTILLA_TLS_CERT";
    throw new ConfigError(`Invalid ${missing}: FLOTILLA_TLS_CERT and FLOTILLA_TLS_KEY are set together`);
  }
  if (e.FLOTILLA_TLS && e.FLOTILLA_TLS_CERT) {
    throw new ConfigError(
      'Invalid FLOTILLA_TLS="generate": not with FLOTILLA_TLS_CERT and FLOTILLA_TLS_KEY (your own certificate); set one or the other',
    );
  }
  const tlsOn = Boolean(e.FLOTILLA_TLS || e.FLOTILLA_TLS_CERT);
  // Devices and browsers reach the API by this URL: with TLS on the port, it is https.
  if (tlsOn && e.FLOTILLA_API_URL?.startsWith("http:")) {
    throw new ConfigError(
      `Invalid FLOTILLA_API_URL=${JSON.stringify(e.FLOTILLA_API_URL)}: must be an https URL when the API serves TLS (${e.FLOTILLA_TLS ? "FLOTILLA_TLS" : "FLOTILLA_TLS_CERT"})`,
    );
  }
  if (
    e.FLOTILLA_VPN_PORT &&
    [e.FLOTILLA_PORT, e.FLOTILLA_API_PORT, e.FLOTILLA_SSH_PORT].includes(e.FLOTILLA_VPN_PORT)
  ) {
    throw new ConfigError(
      `Invalid FLOTILLA_VPN_PORT=${JSON.stringify(String(e.FLOTILLA_VPN_PORT))}: must differ from FLOTILLA_PORT, FLOTILLA_API_PORT and FLOTILLA_SSH_PORT`,
    );
  }
  const subnetBytes = e.FLOTILLA_VPN_SUBNET.split(/[./]/).slice(0, 4).map(Number);
  if (subnetBytes.some((byte) => byte > 255)) {
    throw new ConfigError(
      `Invalid FLOTILLA_VPN_SUBNET=${JSON.stringify(e.FLOTILLA_VPN_SUBNET)}: each of its four numbers must be 0 to 255`,
    );
  }
  const dataDir = path.resolve(e.FLOTILLA_DATA_DIR);
  const publicUrl = trimSlash(e.FLOTILLA_PUBLIC_URL ?? `http://localhost:${e.FLOTILLA_PORT}`);
  const apiUrl = trimSlash(e.FLOTILLA_API_URL ?? `${tlsOn ? "https" : "http"}://localhost:${e.FLOTILLA_API_PORT}`);
  const extraDeviceCa = e.FLOTILLA_DEVICE_CA === undefined ? undefined : readDeviceCa(e.FLOTILLA_DEVICE_CA);
  const tls: ServerTls | undefined =
    e.FLOTILLA_TLS_CERT && e.FLOTILLA_TLS_KEY
      ? {
          ...readServerTls(e.FLOTILLA_TLS_CERT, e.FLOTILLA_TLS_KEY),
          caFile: e.FLOTILLA_DEVICE_CA && path.resolve(e.FLOTILLA_DEVICE_CA),
          generated: undefined,
        }
      : e.FLOTILLA_TLS === "generate"
        ? generateServerTls(path.join(dataDir, "tls"), serverNames(e, apiUrl))
        : undefined;
  // Devices trust the generated CA, and FLOTILLA_DEVICE_CA besides (say, the registry's private CA).
  const deviceCa =
    tls?.generated && tls.caFile
      ? [fs.readFileSync(tls.caFile, "utf8"), extraDeviceCa].filter(Boolean).join("")
      : extraDeviceCa;
  return {
    dashboardPort: e.FLOTILLA_PORT,
    apiPort: e.FLOTILLA_API_PORT,
    sshPort: e.FLOTILLA_SSH_PORT,
    sshHost: e.FLOTILLA_SSH_HOST ?? new URL(apiUrl).hostname,
    vpn: e.FLOTILLA_VPN_PORT
      ? {
          port: e.FLOTILLA_VPN_PORT,
          host: e.FLOTILLA_VPN_HOST ?? new URL(apiUrl).hostname,
          subnet: e.FLOTILLA_VPN_SUBNET,
        }
      : undefined,
    host: e.FLOTILLA_HOST,
    publicUrl,
    apiUrl,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    // The demo is on by default only for the embedded database.
    demo: e.FLOTILLA_DEMO ? e.FLOTILLA_DEMO === "1" : !e.DATABASE_URL,
    demoPassword: e.FLOTILLA_DEMO_PASSWORD,
    demoDevices: e.FLOTILLA_DEMO_DEVICES,
    demoBusyIntervalMs: e.FLOTILLA_DEMO_BUSY_INTERVAL_MS,
    admin:
      e.FLOTILLA_ADMIN_EMAIL && e.FLOTILLA_ADMIN_PASSWORD
        ? { email: e.FLOTILLA_ADMIN_EMAIL, password: e.FLOTILLA_ADMIN_PASSWORD }
        : undefined,
    secret: e.FLOTILLA_SECRET,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.SMTP_FROM ?? `Flotilla <no-reply@${new URL(publicUrl).hostname}>`,
    captcha: e.FLOTILLA_CAPTCHA,
    recaptcha:
      e.RECAPTCHA_SITE_KEY && e.RECAPTCHA_SECRET_KEY
        ? { siteKey: e.RECAPTCHA_SITE_KEY, secretKey: e.RECAPTCHA_SECRET_KEY, verifyUrl: e.RECAPTCHA_VERIFY_URL }
        : undefined,
    emailVerification: e.FLOTILLA_EMAIL_VERIFICATION,
    deviceUrlsBaseDomain: e.FLOTILLA_DEVICE_URLS_BASE_DOMAIN,
    redisUrl: e.REDIS_URL,
    workers: workersOf(e),
    deviceLogLines: e.FLOTILLA_DEVICE_LOG_LINES,
    deviceCa,
    tls,
    osImagesDir: e.FLOTILLA_OS_IMAGES_DIR === undefined ? undefined : readOsImagesDir(e.FLOTILLA_OS_IMAGES_DIR, env),
    deviceLogRetentionDays: e.FLOTILLA_DEVICE_LOG_RETENTION_DAYS,
    deviceLogHeartbeatMs: Math.round(e.FLOTILLA_DEVICE_LOG_HEARTBEAT_SECONDS * 1000),
    deviceActionsHost: e.FLOTILLA_DEVICE_ACTIONS_HOST,
    webDist: path.resolve(e.FLOTILLA_WEB_DIST ?? new URL("../../web/dist", import.meta.url).pathname),
    statusPageUrl: e.FLOTILLA_STATUS_PAGE_URL,
    supportForumUrl: e.FLOTILLA_SUPPORT_FORUM_URL,
    featureRequestsUrl: e.FLOTILLA_FEATURE_REQUESTS_URL,
    docsSearchUrl: e.FLOTILLA_DOCS_SEARCH_URL,
    mapTiles: e.FLOTILLA_MAP_TILES === "none" ? undefined : e.FLOTILLA_MAP_TILES,
    repositoryApiUrl: trimSlash(e.FLOTILLA_REPOSITORY_API_URL),
    repositoryRawUrl: trimSlash(e.FLOTILLA_REPOSITORY_RAW_URL),
    featureFlags: e.FLOTILLA_FEATURE_FLAGS?.split(",") ?? [],
    rateLimitPerMinute: e.FLOTILLA_RATE_LIMIT,
    auditRetentionDays: e.FLOTILLA_AUDIT_RETENTION_DAYS,
    webhookRetryBaseMs: e.FLOTILLA_WEBHOOK_RETRY_BASE_MS,
    trustProxy: e.FLOTILLA_TRUST_PROXY === undefined || e.FLOTILLA_TRUST_PROXY === 0 ? false : e.FLOTILLA_TRUST_PROXY,
    fetchAllow: e.FLOTILLA_FETCH_ALLOW ?? [],
    dnsServers: e.FLOTILLA_DNS_SERVERS,
    registry: e.FLOTILLA_REGISTRY_URL && {
      ...e.FLOTILLA_REGISTRY_URL,
      keyFile: e.FLOTILLA_REGISTRY_KEY && path.resolve(e.FLOTILLA_REGISTRY_KEY),
      certFile: e.FLOTILLA_REGISTRY_CERT && path.resolve(e.FLOTILLA_REGISTRY_CERT),
    },
    builder: e.FLOTILLA_BUILDER && { engine: e.FLOTILLA_BUILDER, mirror: e.FLOTILLA_REGISTRY_MIRROR === "1" },
    salesUrl: e.FLOTILLA_SALES_URL ?? (e.FLOTILLA_ADMIN_EMAIL ? `mailto:${e.FLOTILLA_ADMIN_EMAIL}` : undefined),
    stripe: e.STRIPE_SECRET_KEY
      ? {
          secretKey: e.STRIPE_SECRET_KEY,
          publishableKey: e.STRIPE_PUBLISHABLE_KEY ?? "",
          webhookSecret: e.STRIPE_WEBHOOK_SECRET,
          apiUrl: e.STRIPE_API_URL,
        }
      : undefined,
    variableRules: {
      reservedNames: e.FLOTILLA_VARIABLE_RESERVED_NAMES ?? DEFAULT_VARIABLE_RULES.reservedNames,
      reservedNamespaces: e.FLOTILLA_VARIABLE_RESERVED_NAMESPACES ?? DEFAULT_VARIABLE_RULES.reservedNamespaces,
      whiteListedNames: e.FLOTILLA_VARIABLE_WHITELISTED_NAMES ?? DEFAULT_VARIABLE_RULES.whiteListedNames,
      whiteListedNamespaces: e.FLOTILLA_VARIABLE_WHITELISTED_NAMESPACES ?? DEFAULT_VARIABLE_RULES.whiteListedNamespaces,
      blackListedNames: e.FLOTILLA_VARIABLE_BLACKLISTED_NAMES ?? DEFAULT_VARIABLE_RULES.blackListedNames,
    },
    socialProviders,
    supportPortal:
      e.FLOTILLA_SUPPORT_PORTAL_URL && e.FLOTILLA_SUPPORT_PORTAL_SECRET
        ? { url: e.FLOTILLA_SUPPORT_PORTAL_URL, secret: e.FLOTILLA_SUPPORT_PORTAL_SECRET }
        : undefined,
    chatSecret: e.FLOTILLA_CHAT_SECRET,
    supportTicketFields: e.FLOTILLA_SUPPORT_TICKET_FIELDS
      ? readSupportTicketFields(e.FLOTILLA_SUPPORT_TICKET_FIELDS)
      : undefined,
    zendesk:
      e.ZENDESK_URL && e.ZENDESK_EMAIL && e.ZENDESK_API_TOKEN
        ? { url: trimSlash(e.ZENDESK_URL), email: e.ZENDESK_EMAIL, apiToken: e.ZENDESK_API_TOKEN }
        : undefined,
    billingIssuer: issuerFrom(env),
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT ?? (process.stdout.isTTY ? "pretty" : "json"),
  };
}

function issuerFrom(env: NodeJS.ProcessEnv): BillingIssuer {
  try {
    return readBillingIssuer(env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}
