import crypto from "node:crypto";
import { ApiError, call, type Http, unexpected } from "./http.ts";

/** What a registered device keeps in its state file. */
export type Identity = {
  uuid: string;
  deviceKey: string;
  deviceId: number;
  apiUrl: string;
  fleetId: number;
  deviceType: string;
  /** The image registry (`host[:port]`) that gets the device's credentials; none: no registry does. */
  registryEndpoint?: string;
};

export type RegisterOptions = {
  apiUrl: string;
  provisioningKey: string;
  fleetId: number;
  deviceType: string;
  /** Kept when the device registers again (the 409 path); new ones otherwise. */
  uuid?: string;
  deviceKey?: string;
  deviceId?: number;
  supervisorVersion?: string;
  osVersion?: string;
  osVariant?: string;
  macAddress?: string;
};

export const newUuid = () => crypto.randomBytes(16).toString("hex");
/** The device key is chosen by the device: 32 random bytes, hex. */
export const newDeviceKey = () => crypto.randomBytes(32).toString("hex");

const UUID_TAKEN = '"uuid" must be unique.';

/**
 * `POST /device/register` with the provisioning key (docs/device-protocol.md "Registration").
 * A 409 `"uuid" must be unique.` means the device exists already (a second register, a lost
 * answer): it looks its id up (unless it knows it) and hands the API a fresh key with
 * `POST /api-key/device/{id}/device-key`.
 */
export async function registerDevice(http: Http, options: RegisterOptions): Promise<Identity> {
  const uuid = options.uuid ?? newUuid();
  const deviceKey = options.deviceKey ?? newDeviceKey();
  const answer = await call(http, options.apiUrl, {
    method: "POST",
    path: "/device/register",
    token: options.provisioningKey,
    json: {
      application: options.fleetId,
      uuid,
      device_type: options.deviceType,
      api_key: deviceKey,
      supervisor_version: options.supervisorVersion,
      os_version: options.osVersion,
      os_variant: options.osVariant,
      mac_address: options.macAddress,
    },
  });
  const base = { uuid, deviceKey, apiUrl: options.apiUrl, fleetId: options.fleetId, deviceType: options.deviceType };
  if (answer.status === 201) {
    const body = JSON.parse(answer.text) as { id?: unknown };
    if (typeof body.id !== "number") throw new ApiError("registration answered without a device id", 201);
    return { ...base, deviceId: body.id };
  }
  if (answer.status === 409 && answer.text.includes(UUID_TAKEN)) {
    // The exchange hands the API a fresh key: the API refuses a key it already holds (500), and
    // the device may well hold one already (its first answer was lost, or it registers again).
    const freshKey = newDeviceKey();
    const deviceId =
      options.deviceId ??
      (await lookUpDeviceId(http, options.apiUrl, uuid, deviceKey)) ??
      (await lookUpDeviceId(http, options.apiUrl, uuid, options.provisioningKey));
    if (deviceId === null) {
      throw new ApiError(`device ${uuid} exists but neither its key nor the provisioning key can look it up`, 409);
    }
    const exchange = await call(http, options.apiUrl, {
      method: "POST",
      path: `/api-key/device/${deviceId}/device-key`,
      token: options.provisioningKey,
      json: { apiKey: freshKey },
    });
    if (exchange.status !== 200) throw unexpected("the device key exchange", exchange);
    return { ...base, deviceKey: freshKey, deviceId };
  }
  throw unexpected("registration", answer);
}

async function lookUpDeviceId(http: Http, apiUrl: string, uuid: string, token: string): Promise<number | null> {
  const answer = await call(http, apiUrl, {
    method: "GET",
    path: `/v7/device?$select=id&$filter=${encodeURIComponent(`uuid eq '${uuid}'`)}`,
    token,
  });
  if (answer.status !== 200) return null;
  const id = (JSON.parse(answer.text) as { d?: { id?: unknown }[] }).d?.[0]?.id;
  return typeof id === "number" ? id : null;
}
