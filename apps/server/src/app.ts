import zlib from "node:zlib";
import fastifyCompress, { type FastifyCompressOptions } from "@fastify/compress";
import fastifyCors from "@fastify/cors";
import fastifyHelmet from "@fastify/helmet";
import fastifyRateLimit from "@fastify/rate-limit";
import fastifyWebsocket from "@fastify/websocket";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import pino from "pino";
import type { Config } from "./config.ts";
import type { AppContext } from "./context.ts";
import type { Database } from "./db/index.ts";
import { FlotillaError } from "./errors.ts";
import { accountRoutes } from "./features/account/routes.ts";
import { createTotpGuard } from "./features/account/two-factor.ts";
import { adminRoutes } from "./features/admin/routes.ts";
import { agentDownloadRoutes } from "./features/agent-download/routes.ts";
import { apiKeyRoutes } from "./features/api-keys/routes.ts";
import { auditRoutes } from "./features/audit/routes.ts";
import { createLoginThrottle } from "./features/auth/login-throttle.ts";
import { registerRoutes } from "./features/auth/register.ts";
import { authRoutes } from "./features/auth/routes.ts";
import { createSessionTokens } from "./features/auth/sessions.ts";
import { billingRoutes } from "./features/billing/routes.ts";
import { createProofOfWork } from "./features/captcha/proof-of-work.ts";
import { captchaRoutes } from "./features/captcha/routes.ts";
import { commandRunRoutes } from "./features/command-runs/routes.ts";
import { refusalsAtStart } from "./features/command-runs/runs.ts";
import { createCommandScheduler } from "./features/command-runs/scheduler.ts";
import { dashboardServer } from "./features/dashboard/server.ts";
import { dataApiRoutes } from "./features/data-api/routes.ts";
import { deployRoutes } from "./features/deploy/routes.ts";
import { deviceConfigRoutes } from "./features/device-config/routes.ts";
import { deviceTypeRoutes } from "./features/device-types/routes.ts";
import { diagnosticsRoutes } from "./features/devices/diagnostics.ts";
import { deviceRegisterRoutes } from "./features/devices/register.ts";
import { deviceRoutes } from "./features/devices/routes.ts";
import { createDeviceServices } from "./features/devices/services.ts";
import { supervisorRelayRoutes } from "./features/devices/supervisor-relay.ts";
import { healthRoutes } from "./features/health/routes.ts";
import { domainRoutes } from "./features/identity/domain-routes.ts";
import { handoffRoutes } from "./features/identity/handoff-routes.ts";
import { oauthRoutes } from "./features/identity/oauth.ts";
import { samlRoutes } from "./features/identity/saml-routes.ts";
import { socialRoutes } from "./features/identity/social-routes.ts";
import { invitationRoutes } from "./features/invitations/routes.ts";
import { createMailer } from "./features/mail/mailer.ts";
import { organizationLogoRoutes } from "./features/organizations/logo.ts";
import { osImageRoutes } from "./features/os-images/routes.ts";
import { restrictActionsHost } from "./features/os-updates/actions-host.ts";
import { osUpdateRoutes } from "./features/os-updates/routes.ts";
import { registryRoutes } from "./features/registry/routes.ts";
import { releaseRoutes } from "./features/releases/routes.ts";
import { createRolloutEngine } from "./features/rollouts/engine.ts";
import { rolloutRoutes } from "./features/rollouts/routes.ts";
import { supportRoutes } from "./features/support/routes.ts";
import { terminalRoutes } from "./features/terminal/routes.ts";
import { createTerminalSessions } from "./features/terminal/sessions.ts";
import { connectProxy } from "./features/tunnels/connect-proxy.ts";
import { createDeviceTunnels } from "./features/tunnels/tunnels.ts";
import { variableRoutes } from "./features/variables/routes.ts";
import { createJitKeys } from "./features/vpn/jit-keys.ts";
import { vpnRoutes } from "./features/vpn/routes.ts";
import { createSupervisorApis } from "./features/vpn/supervisor-api.ts";
import { webhookRoutes } from "./features/webhooks/routes.ts";
import { bearerToken, isKnownDeviceKey, registerAuthentication, tokenHashOf } from "./lib/authenticate.ts";
import { serverTlsOptions } from "./lib/certificates.ts";
import { ERROR_CODE_HEADER, ERROR_PARAMS_HEADER, registerErrorHandler } from "./lib/error-handler.ts";
import { createSealer } from "./lib/sealed.ts";
import { loadSecret } from "./lib/secret.ts";

// One log line per request would drown the device hot path; failures are logged by the error handler.
const quietRequests = new LogController({ disableRequestLogging: true });

/** Bounds on what a client may send (DESIGN §8). */
const BODY_LIMIT = 1024 * 1024;
const WEBSOCKET_MESSAGE_LIMIT = 1024 * 1024;

/**
 * Device calls are limited per device key, not per address: a site's devices share one address
 * behind NAT, and a device polls, reports and streams logs on its own schedule. A key counts as
 * one once authentication has verified it (and until its cache entry lapses); until then its
 * calls count against the address, so invented tokens buy no buckets.
 */
const DEVICE_ROUTE = /^\/(device\/v[23]\/|cloudlink\/)/;
const DEVICE_RATE_LIMIT_PER_MINUTE = 1200;

/** A hop count trusts the nearest n hops whatever their addresses (as proxy-addr reads a number). */
const trustProxyOf = (setting: Config["trustProxy"]) =>
  typeof setting === "number" ? (_address: string, hop: number) => hop < setting : setting;

/** The API origin: every route authenticated unless marked public. */
/**
 * API answers above 1 KB go out compressed (brotli or gzip, at fast levels: a busy API spends
 * little CPU on them) when the client accepts it. JSON, text and XML only: downloads (packages,
 * PDFs, images) are compressed already or not worth it, and streams the client reads as they
 * come (server-sent events, NDJSON logs, terminals) are written unbuffered on their own sockets.
 */
const API_COMPRESSION: FastifyCompressOptions = {
  global: true,
  threshold: 1024,
  encodings: ["br", "gzip"],
  customTypes: /^text\/(?!event-stream)|[/+]json(?:;|$)|[/+]xml(?:;|$)/,
  brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
  zlibOptions: { level: 5 },
};

export async function buildApi(ctx: AppContext, logger: FastifyBaseLogger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT,
    // Forwarded headers are believed only from the proxies the operator names (FLOTILLA_TRUST_PROXY):
    // otherwise any client could choose its address for the rate limits, throttles and audit records.
    trustProxy: trustProxyOf(ctx.config.trustProxy),
    return503OnClosing: true,
    logController: quietRequests,
    // The API's own TLS when configured (config.tls); main.ts swaps in a renewed certificate.
    https: ctx.config.tls ? serverTlsOptions(ctx.config.tls) : null,
  });
  registerErrorHandler(app);
  restrictActionsHost(app, ctx.config);
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: false,
    // The dashboard on another origin loads images (logos) from the API.
    crossOriginResourcePolicy: { policy: "cross-origin" },
  });
  await app.register(fastifyCors, {
    origin: [ctx.config.publicUrl],
    methods: ["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"],
    allowedHeaders: ["Authorization", "Content-Type", "X-Balena-Client"],
    exposedHeaders: ["Retry-After", ERROR_CODE_HEADER, ERROR_PARAMS_HEADER],
    maxAge: 600,
  });
  // Request bodies are not unpacked by the plugin: the device log stream reads its own gzip
  // bodies with a bound on the unpacked size (413 beyond it), and no other route takes them.
  app.addHook("onRoute", (route) => {
    route.decompress ??= false;
  });
  await app.register(fastifyCompress, API_COMPRESSION);
  await app.register(fastifyRateLimit, {
    global: true,
    max: (_request, key) => (key.startsWith("device:") ? DEVICE_RATE_LIMIT_PER_MINUTE : ctx.config.rateLimitPerMinute),
    keyGenerator: (request) => {
      const token = bearerToken(request);
      // Only a key already verified buys its own bucket: random tokens count against the address.
      if (token && DEVICE_ROUTE.test(request.url) && isKnownDeviceKey(ctx, request, token)) {
        return `device:${tokenHashOf(request, token).slice(0, 32)}`;
      }
      return request.ip;
    },
    // Room for every device of a large fleet plus the users.
    cache: 50_000,
    timeWindow: "1 minute",
    errorResponseBuilder: (_request, context) =>
      new FlotillaError("too_many_requests", undefined, {
        headers: { "retry-after": String(Math.ceil(context.ttl / 1000)) },
      }),
  });
  await app.register(fastifyWebsocket, { options: { maxPayload: WEBSOCKET_MESSAGE_LIMIT } });
  registerAuthentication(app, ctx);
  // In-memory device state (batched reports, last-seen times) is written before the database closes.
  app.addHook("onClose", () => ctx.devices.close());
  await app.register(healthRoutes, ctx);
  await app.register(authRoutes, ctx);
  await app.register(registerRoutes, ctx);
  await app.register(accountRoutes, ctx);
  await app.register(captchaRoutes, ctx);
  await app.register(apiKeyRoutes, ctx);
  await app.register(dataApiRoutes, ctx);
  await app.register(invitationRoutes, ctx);
  await app.register(organizationLogoRoutes, ctx);
  await app.register(deployRoutes, ctx);
  await app.register(deviceConfigRoutes, ctx);
  await app.register(agentDownloadRoutes, ctx);
  await app.register(deviceTypeRoutes, ctx);
  await app.register(osImageRoutes, ctx);
  await app.register(deviceRegisterRoutes, ctx);
  await app.register(deviceRoutes, ctx);
  await app.register(supervisorRelayRoutes, ctx);
  await app.register(vpnRoutes, ctx);
  await app.register(diagnosticsRoutes, ctx);
  await app.register(osUpdateRoutes, ctx);
  await app.register(terminalRoutes, ctx);
  await app.register(commandRunRoutes, ctx);
  await app.register(connectProxy, ctx);
  await app.register(variableRoutes, ctx);
  await app.register(releaseRoutes, ctx);
  await app.register(rolloutRoutes, ctx);
  await app.register(registryRoutes, ctx);
  await app.register(billingRoutes, ctx);
  await app.register(auditRoutes, ctx);
  await app.register(webhookRoutes, ctx);
  await app.register(samlRoutes, ctx);
  await app.register(domainRoutes, ctx);
  await app.register(socialRoutes, ctx);
  await app.register(oauthRoutes, ctx);
  await app.register(handoffRoutes, ctx);
  await app.register(supportRoutes, ctx);
  await app.register(adminRoutes, ctx);
  return app;
}

export async function buildDashboard(config: Config, logger: FastifyBaseLogger): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: logger, return503OnClosing: true, logController: quietRequests });
  await dashboardServer(app, config);
  return app;
}

export async function buildContext(
  config: Config,
  db: Database,
  logger: FastifyBaseLogger = pino({ level: config.logLevel }),
): Promise<AppContext> {
  const secret = loadSecret(config);
  const devices = await createDeviceServices(config, db, logger);
  const rollouts = createRolloutEngine({
    db,
    devices,
    onError: (error) => logger.error({ err: error }, "rollouts: evaluation failed"),
  });
  // A report written for a device of a rolling-out fleet re-judges its wave (no polling of devices).
  devices.reports.onWritten((fleets) => rollouts.onReportsWritten(fleets));
  return {
    config,
    db,
    tokens: createSessionTokens(db.orm, secret),
    loginThrottle: createLoginThrottle(),
    totpGuard: createTotpGuard(),
    captcha: createProofOfWork(secret),
    webhookSecrets: createSealer(secret, "webhook-secret"),
    supervisorApis: createSupervisorApis(db, createSealer(secret, "supervisor-api-secret")),
    jitKeys: createJitKeys(devices.bus),
    vpnCa: { pem: undefined },
    mail: createMailer(config, db.orm, logger),
    devices,
    rollouts,
    terminals: createTerminalSessions({
      relay: devices.relay,
      bus: devices.bus,
      db,
      onError: (error) => logger.error({ err: error }, "terminal: audit or relay failed"),
    }),
    commandRuns: createCommandScheduler({
      relay: devices.relay,
      bus: devices.bus,
      db,
      checkStart: (run, deviceIds) => refusalsAtStart(db, run, deviceIds),
      onError: (error) => logger.error({ err: error }, "command runs: write or relay failed"),
    }),
    tunnels: createDeviceTunnels({
      relay: devices.relay,
      bus: devices.bus,
      db,
      onError: (error) => logger.error({ err: error }, "tunnel: audit or relay failed"),
    }),
  };
}
