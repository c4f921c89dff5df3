import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { buildDeviceConfig } from "./service.ts";

/** What balena-sdk `os.getConfig` posts: its options plus the fleet's id as `appId`. */
const configBody = z.object({
  appId: z.number({ error: "is required: the fleet's id" }).int().positive(),
  version: z
    .string({ error: "is required: the OS version" })
    .trim()
    .min(1, "is required: the OS version")
    .max(100)
    .refine(
      (version) => !unsupportedOsVersion(version),
      "balenaOS versions <= 1.2.0 are no longer supported, please update",
    ),
  network: z.enum(["ethernet", "wifi"], { error: 'must be "ethernet" or "wifi"' }).default("ethernet"),
  deviceType: z.string().trim().min(1).max(100).optional(),
  appUpdatePollInterval: z
    .number({ error: "must be a number of minutes" })
    .int("must be a whole number of minutes")
    .min(1, "must be at least 1 minute")
    .max(24 * 60, "must be at most 1440 minutes")
    .optional(),
  developmentMode: z.boolean({ error: "must be true or false" }).optional(),
  provisioningKeyName: z.string({ error: "must be a string" }).trim().max(255).nullish(),
  provisioningKeyExpiryDate: z
    .union([z.null(), z.coerce.date()], { error: "must be a date" })
    .refine((date) => date === null || !Number.isNaN(date.getTime()), "must be a date")
    // "Now" is accepted (balena-cli passes the moment it asks): a minute's slack for the trip.
    .refine((date) => date === null || date.getTime() > Date.now() - 60_000, "must not be in the past")
    .optional(),
  wifiSsid: z.string().max(64).optional(),
  wifiKey: z.string().max(128).optional(),
});

/** balena refuses config for balenaOS 1.2.0 and older: "2.88.5+rev1", "v1.1.0", "1.2.0.prod". */
export function unsupportedOsVersion(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!match) return false;
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return major < 1 || (major === 1 && (minor < 2 || (minor === 2 && patch === 0)));
}

export async function deviceConfigRoutes(app: FastifyInstance, ctx: AppContext) {
  // balena-sdk `os.getConfig`: a device's configuration file with a new provisioning key.
  app.post("/download-config", async (request) => {
    const caller = requireAuth(request);
    const body = parseInput(configBody, request.body);
    const endpoints = {
      apiUrl: ctx.config.apiUrl,
      registryHost: ctx.config.registry?.host,
      deviceCa: ctx.config.deviceCa,
      vpn: ctx.config.vpn,
    };
    return buildDeviceConfig(ctx.db, caller, endpoints, body);
  });
}
