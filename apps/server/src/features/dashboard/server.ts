import fs from "node:fs";
import path from "node:path";
import fastifyHelmet from "@fastify/helmet";
import fastifyStatic from "@fastify/static";
import { APP_VERSION, CLI_CALLBACK_POST_HOSTS } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply } from "fastify";
import { type Config, mapTilesSource } from "../../config.ts";

/** What the built dashboard reads at boot, so one build serves any deployment. */
export function runtimeConfig(config: Config) {
  return {
    apiUrl: config.apiUrl,
    publicUrl: config.publicUrl,
    appVersion: APP_VERSION,
    deviceUrlsBaseDomain: config.deviceUrlsBaseDomain ?? null,
    deviceActionsHost: config.deviceActionsHost ?? null,
    statusPageUrl: config.statusPageUrl ?? null,
    /** The support drawer's links (FLOTILLA_SUPPORT_FORUM_URL, FLOTILLA_FEATURE_REQUESTS_URL). */
    supportForumUrl: config.supportForumUrl,
    featureRequestsUrl: config.featureRequestsUrl,
    /** The support drawer's docs search template with `{query}` (FLOTILLA_DOCS_SEARCH_URL); null: none. */
    docsSearchUrl: config.docsSearchUrl ?? null,
    /** The device map's tile URL template (FLOTILLA_MAP_TILES); null: no tiles, markers only. */
    mapTilesUrl: config.mapTiles ?? null,
    /** Where "Contact sales" leads (FLOTILLA_SALES_URL); null: a mail with no address filled in. */
    salesUrl: config.salesUrl ?? null,
    /** Stripe's publishable key when Stripe takes the payments; null: the built-in test provider. */
    stripePublishableKey: config.stripe?.publishableKey ?? null,
    /** The SSH gateway (git push, balena ssh) when FLOTILLA_SSH_PORT is set: its host name and port; null: none. */
    sshHost: config.sshPort === undefined ? null : config.sshHost,
    sshPort: config.sshPort ?? null,
  };
}

/** Google's reCAPTCHA widget: its script and its frame, only when the deployment uses it. */
const RECAPTCHA_SOURCES = ["https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/"];
/**
 * The command-line login posts the token to the CLI's own server on this machine (spec 1 §5),
 * in a form POST only (security review 3): form-action names the loopback ports the page posts
 * to and nothing else. CSP host sources cannot name IPv6 literals (Chromium ignores
 * `http://[::1]:*` as an invalid source), so the page tells a CLI on [::1] it cannot reach it.
 */
const LOCAL_CALLBACKS = CLI_CALLBACK_POST_HOSTS.map((host) => `http://${host}:*`);
/** Stripe.js and its Payment Element (frames, API calls), only when Stripe takes the payments. */
const STRIPE_SCRIPTS = ["https://js.stripe.com"];
const STRIPE_FRAMES = ["https://js.stripe.com", "https://hooks.stripe.com"];
const STRIPE_CONNECT = ["https://api.stripe.com"];

function contentSecurityPolicy(config: Config) {
  const api = new URL(config.apiUrl);
  const apiSocket = `${api.protocol === "https:" ? "wss:" : "ws:"}//${api.host}`;
  const recaptcha = config.captcha === "recaptcha" ? RECAPTCHA_SOURCES : [];
  const stripe = config.stripe !== undefined;
  return {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'", ...recaptcha, ...(stripe ? STRIPE_SCRIPTS : [])],
      // The API: the add-device dialog posts the balenaOS image download into a hidden frame.
      frameSrc: ["'self'", api.origin, ...recaptcha, ...(stripe ? STRIPE_FRAMES : [])],
      // MUI (emotion) injects style elements at run time.
      styleSrc: ["'self'", "'unsafe-inline'"],
      // The map's tile server is named even when it is plain http (https: covers the others).
      imgSrc: [
        "'self'",
        "data:",
        "blob:",
        "https:",
        api.origin,
        ...(config.mapTiles ? [mapTilesSource(config.mapTiles)] : []),
      ],
      fontSrc: ["'self'", "data:"],
      connectSrc: [
        "'self'",
        api.origin,
        apiSocket,
        ...(config.statusPageUrl ? [new URL(config.statusPageUrl).origin] : []),
        ...(stripe ? STRIPE_CONNECT : []),
      ],
      workerSrc: ["'self'", "blob:"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'", api.origin, ...LOCAL_CALLBACKS],
      frameAncestors: ["'none'"],
    },
  };
}

/**
 * Helmet's headers that only a document obeys. A page loads a hundred hashed chunks, and these
 * (1 KB, the CSP most of it) were sent uncompressed with each: a third of the login page's bytes
 * over the wire (issue performance-2). Scripts keep `nosniff` and the resource policy.
 */
const DOCUMENT_ONLY_HEADERS = [
  "content-security-policy",
  "cross-origin-opener-policy",
  "origin-agent-cluster",
  "referrer-policy",
  "strict-transport-security",
  "x-dns-prefetch-control",
  "x-download-options",
  "x-frame-options",
  "x-permitted-cross-domain-policies",
  "x-xss-protection",
];

/**
 * The dashboard origin: the built SPA with long-cached hashed assets, index.html for every
 * other GET (client-side routes), and /config.json.
 */
export async function dashboardServer(app: FastifyInstance, config: Config) {
  await app.register(fastifyHelmet, { contentSecurityPolicy: contentSecurityPolicy(config) });
  app.setErrorHandler((error, request, reply) => {
    request.log.error({ err: error }, "dashboard request failed");
    return reply.code(500).type("text/plain").send("Something went wrong, please try again later.");
  });

  app.get("/config.json", async (_request, reply) => {
    reply.header("cache-control", "no-store");
    return runtimeConfig(config);
  });

  const indexFile = path.join(config.webDist, "index.html");
  if (!fs.existsSync(indexFile)) {
    app.log.warn(`The dashboard is not built (${indexFile} is missing): run npm run build`);
    app.setNotFoundHandler((_request, reply) =>
      reply.code(503).type("text/plain").send("The dashboard is not built: run npm run build"),
    );
    return;
  }

  await app.register(fastifyStatic, {
    root: config.webDist,
    index: false,
    wildcard: false,
    // The build writes a .br and a .gz beside each text asset: the best one the browser accepts
    // is sent as it is, with Content-Encoding and Vary (no compression work per request).
    preCompressed: true,
    // The ETag revalidates index.html; hashed assets are never revalidated.
    lastModified: false,
    setHeaders(reply, filePath) {
      const hashed = filePath.startsWith(path.join(config.webDist, "assets") + path.sep);
      reply.header("cache-control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
      if (hashed) for (const name of DOCUMENT_ONLY_HEADERS) reply.raw.removeHeader(name);
    },
  });

  const sendIndex = (reply: FastifyReply) => reply.header("cache-control", "no-cache").sendFile("index.html");

  app.get("/", (_request, reply) => sendIndex(reply));
  app.setNotFoundHandler((request, reply) => {
    // A missing hashed asset is a real 404 (a stale chunk must fail loudly); anything else is an
    // SPA route, dots included (`/user/verify-email/{token}/ann@example.com`).
    if (request.method !== "GET" || request.url.startsWith("/assets/")) {
      return reply.code(404).type("text/plain").send("Not found");
    }
    return sendIndex(reply);
  });
}
