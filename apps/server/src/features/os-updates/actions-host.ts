import type { FastifyInstance } from "fastify";
import type { Config } from "../../config.ts";
import { FlotillaError } from "../../errors.ts";

/**
 * The device actions host. balena-sdk sends OS updates (`device.startOsUpdate`) to
 * `https://actions.{deviceUrlsBase}/{v1|v2}/{uuid}/resinhup`, and the dashboard reads
 * diagnostics there: the API answers those requests when they arrive under that name
 * (FLOTILLA_DEVICE_ACTIONS_HOST, by default `actions.{FLOTILLA_DEVICE_URLS_BASE_DOMAIN}`), and
 * nothing else under it, so the name is a device actions service and never a second API origin.
 */
const ACTION_PATH = /^\/v[12]\/[0-9a-f]{7,62}\/[A-Za-z-]{1,40}(?:\?|$)/;

/** The actions host's name: FLOTILLA_DEVICE_ACTIONS_HOST (a host or a URL), or balena's default. */
export function actionsHostName(config: Pick<Config, "deviceActionsHost" | "deviceUrlsBaseDomain">): string {
  const configured = config.deviceActionsHost;
  if (!configured) return `actions.${config.deviceUrlsBaseDomain}`.toLowerCase();
  const name = configured.includes("://") ? new URL(configured).hostname : configured.replace(/:\d+$/, "");
  return name.toLowerCase();
}

/** Refuses, on the actions host, every request that is not a device action (CORS preflights pass). */
export function restrictActionsHost(app: FastifyInstance, config: Config) {
  const actionsHost = actionsHostName(config);
  app.addHook("onRequest", async (request) => {
    if (request.hostname.toLowerCase() !== actionsHost || request.method === "OPTIONS") return;
    if (!ACTION_PATH.test(request.url)) {
      throw new FlotillaError("not_found", `${actionsHost} serves device actions only: /v1|v2/{uuid}/{action}`);
    }
  });
}
