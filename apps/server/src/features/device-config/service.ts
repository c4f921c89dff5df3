import { fleetRolesAllowing } from "@flotilla/domain";
import type { Database } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { canCreateKeysFor, createApiKey } from "../api-keys/service.ts";

/**
 * The device configuration `POST /download-config` answers: balena's config.json as balenaOS
 * and its Supervisor read it (`applicationId`, `deviceType`, `apiEndpoint`, `apiKey` as the
 * fleet's provisioning key, `appUpdatePollInterval` in ms, `listenPort` of the Supervisor's
 * device API, `registryEndpoint` when there is an image registry, `balenaRootCA` when devices
 * must trust a private CA, …), plus `fleetSlug`. `flotilla-agent register --config` reads it too.
 * `vpnEndpoint`/`vpnPort` name the device VPN when it runs (FLOTILLA_VPN_PORT). Left out while
 * Flotilla has no such service (docs/device-protocol.md "balenaOS devices"): `deltaEndpoint` (no
 * delta server), `logsEndpoint` (logs go to `apiEndpoint`), `mixpanelToken`.
 */
export type DeviceConfig = {
  applicationId: number;
  applicationName: string;
  fleetSlug: string;
  deviceType: string;
  userId: number | null;
  username: string | null;
  apiEndpoint: string;
  /** The port of the Supervisor's device API on the device (balena's 48484). */
  listenPort: number;
  /** The image registry's `host[:port]`: the only registry the device sends its credentials to. */
  registryEndpoint?: string;
  apiKey: string;
  provisioningKeyName: string | null;
  provisioningKeyExpiryDate: string | null;
  appUpdatePollInterval: number;
  developmentMode: boolean;
  version: string;
  network: "ethernet" | "wifi";
  wifiSsid?: string;
  wifiKey?: string;
  /** The CA certificates (PEM, base64) a device must trust to reach the API: config.deviceCa (the generated CA, FLOTILLA_DEVICE_CA). */
  balenaRootCA?: string;
  /** The device VPN's host and port (balenaOS's OpenVPN client connects there). */
  vpnEndpoint?: string;
  vpnPort?: number;
};

/** balena's Supervisor listens for its device API on this port (its config schema's default). */
export const SUPERVISOR_LISTEN_PORT = 48484;

export type ConfigRequest = {
  appId: number;
  version: string;
  network: "ethernet" | "wifi";
  deviceType?: string | undefined;
  appUpdatePollInterval?: number | undefined;
  developmentMode?: boolean | undefined;
  provisioningKeyName?: string | null | undefined;
  provisioningKeyExpiryDate?: Date | null | undefined;
  wifiSsid?: string | undefined;
  wifiKey?: string | undefined;
};

/** balena's default poll interval (10 minutes), in ms as config.json carries it. */
const DEFAULT_POLL_INTERVAL_MS = 600_000;

export async function buildDeviceConfig(
  db: Pick<Database, "query" | "orm">,
  caller: { actor: number; user: { id: number; username: string } | undefined },
  endpoints: {
    apiUrl: string;
    registryHost: string | undefined;
    deviceCa?: string | undefined;
    vpn?: { host: string; port: number } | undefined;
  },
  input: ConfigRequest,
): Promise<DeviceConfig> {
  const { rows } = await db.query<{
    actor: number;
    app_name: string;
    slug: string;
    device_type: string;
    architecture: number;
    readable: boolean;
  }>(
    `SELECT a.actor, a.app_name, a.slug, dt.slug AS device_type, dt.is_of__cpu_architecture AS architecture,
            (a.is_public OR EXISTS (SELECT 1 FROM "fleet_access" fa
                                     WHERE fa.application = a.id AND fa.actor = $2 AND fa.role = ANY($3))) AS readable
       FROM "application" a JOIN "device_type" dt ON dt.id = a.is_for__device_type
      WHERE a.id = $1`,
    [input.appId, caller.actor, fleetRolesAllowing("application", "read")],
  );
  const fleet = rows[0];
  // A fleet the caller cannot see is answered like one that does not exist.
  if (!fleet?.readable) throw new FlotillaError("not_found", `Fleet not found: ${input.appId}`);
  if (!(await canCreateKeysFor(db, caller.actor, input.appId))) {
    throw new FlotillaError(
      "forbidden",
      "You are not allowed to create provisioning keys for this fleet, which a device configuration contains.",
    );
  }
  let deviceType = fleet.device_type;
  if (input.deviceType !== undefined && input.deviceType !== deviceType) {
    // By slug or alias (balena's older names such as `raspberrypi`), as the SDK resolves them.
    const known = await db.query<{ slug: string; architecture: number }>(
      `SELECT dt.slug, dt.is_of__cpu_architecture AS architecture
         FROM "device_type" dt JOIN "device_type_alias" dta ON dta.device_type = dt.id
        WHERE dta.is_referenced_by__alias = $1`,
      [input.deviceType],
    );
    if (known.rows.length === 0) {
      throw new FlotillaError("bad_request", `deviceType: unknown device type "${input.deviceType}"`);
    }
    // Registration refuses another CPU architecture than the fleet's: say so now, not on the device.
    if (known.rows[0]?.architecture !== fleet.architecture) {
      throw new FlotillaError(
        "bad_request",
        `deviceType: "${input.deviceType}" has another CPU architecture than this fleet's ${fleet.device_type}`,
      );
    }
    deviceType = known.rows[0]?.slug ?? input.deviceType;
  }
  const apiKey = await createApiKey(db.orm, {
    actor: fleet.actor,
    role: "provisioning-api-key",
    name: input.provisioningKeyName ?? null,
    description: "Device configuration (download-config)",
    expiryDate: input.provisioningKeyExpiryDate ?? null,
  });
  return {
    applicationId: input.appId,
    applicationName: fleet.app_name,
    fleetSlug: fleet.slug,
    deviceType,
    userId: caller.user?.id ?? null,
    username: caller.user?.username ?? null,
    apiEndpoint: endpoints.apiUrl,
    listenPort: SUPERVISOR_LISTEN_PORT,
    ...(endpoints.registryHost ? { registryEndpoint: endpoints.registryHost } : {}),
    apiKey,
    provisioningKeyName: input.provisioningKeyName ?? null,
    provisioningKeyExpiryDate: input.provisioningKeyExpiryDate?.toISOString() ?? null,
    appUpdatePollInterval:
      input.appUpdatePollInterval === undefined ? DEFAULT_POLL_INTERVAL_MS : input.appUpdatePollInterval * 60_000,
    developmentMode: input.developmentMode ?? false,
    version: input.version,
    network: input.network,
    ...(input.network === "wifi" && input.wifiSsid ? { wifiSsid: input.wifiSsid } : {}),
    ...(input.network === "wifi" && input.wifiKey ? { wifiKey: input.wifiKey } : {}),
    ...(endpoints.deviceCa ? { balenaRootCA: Buffer.from(endpoints.deviceCa).toString("base64") } : {}),
    ...(endpoints.vpn ? { vpnEndpoint: endpoints.vpn.host, vpnPort: endpoints.vpn.port } : {}),
  };
}
