import type { Queryable } from "../../db/index.ts";
import type { Sealer } from "../../lib/sealed.ts";
import type { RelayAction, RelayAnswer } from "../devices/relay.ts";

/**
 * balena's Supervisor API on a balenaOS device (its `src/device-api/v1.ts` and `v2.ts`), reached
 * over the device VPN at the device's VPN address and the `api_port` it reports, with the
 * `api_secret` it reports as `?apikey=`. The relay's actions map onto it one to one.
 */

/** How long the device has to answer one call: the relay's own bound is 30 s. */
const CALL_TIMEOUT_MS = 25_000;

type Call = { method: "GET" | "POST"; path: string; body?: Record<string, unknown> };

/** The Supervisor API call an action is; undefined for the agent's own actions (checks, diagnose, resinhup). */
export function supervisorCall(action: RelayAction, data: unknown, appId: number): Call | undefined {
  const given = data && typeof data === "object" ? (data as Record<string, unknown>) : {};
  const force = given.force === true;
  const app = Number(given.appId ?? appId);
  switch (action) {
    case "blink":
      return { method: "POST", path: "/v1/blink", body: {} };
    case "update":
      return { method: "POST", path: "/v1/update", body: { force } };
    case "reboot":
      return { method: "POST", path: "/v1/reboot", body: { force } };
    case "shutdown":
      return { method: "POST", path: "/v1/shutdown", body: { force } };
    case "restart":
      return { method: "POST", path: "/v1/restart", body: { appId: app, force } };
    case "purge":
      return { method: "POST", path: "/v1/purge", body: { appId: app, force } };
    case "device":
      return { method: "GET", path: "/v1/device" };
    case "start-service":
    case "stop-service":
    case "restart-service": {
      const body: Record<string, unknown> = { force };
      if (typeof given.serviceName === "string") body.serviceName = given.serviceName;
      if (given.imageId !== undefined) body.imageId = Number(given.imageId);
      return { method: "POST", path: `/v2/applications/${app}/${action}`, body };
    }
    default:
      return undefined;
  }
}

/** Calls the device's Supervisor API; the status and body (JSON or text) are the answer. */
export async function callSupervisor(
  target: { address: string; port: number; secret: string },
  call: Call,
): Promise<RelayAnswer> {
  const url = `http://${target.address}:${target.port}${call.path}?apikey=${encodeURIComponent(target.secret)}`;
  const response = await fetch(url, {
    method: call.method,
    headers: call.body ? { "content-type": "application/json" } : {},
    ...(call.body ? { body: JSON.stringify(call.body) } : {}),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // The Supervisor answers some calls in plain text ("OK").
  }
  return { status: response.status, body };
}

/**
 * The Supervisor API's port and secret of each device, as its state reports name them: written
 * at once when they change (the report's other fields go in batches), the secret sealed (as
 * webhook secrets are).
 */
export function createSupervisorApis(db: Pick<Queryable, "query">, sealer: Sealer) {
  const stored = new Map<number, string>();
  return {
    async remember(
      deviceId: number,
      report: { api_port?: number | null | undefined; api_secret?: string | null | undefined },
    ) {
      if (!report.api_secret) return;
      const known = `${report.api_port ?? ""}:${report.api_secret}`;
      if (stored.get(deviceId) === known) return;
      await db.query(`UPDATE "device" SET api_secret = $2, api_port = COALESCE($3, api_port) WHERE id = $1`, [
        deviceId,
        sealer.seal(report.api_secret),
        report.api_port ?? null,
      ]);
      stored.set(deviceId, known);
    },
    /** Undefined until the device reported both. */
    async of(deviceId: number): Promise<{ port: number; secret: string } | undefined> {
      const { rows } = await db.query<{ api_port: number | null; api_secret: string | null }>(
        `SELECT api_port, api_secret FROM "device" WHERE id = $1`,
        [deviceId],
      );
      const row = rows[0];
      if (!row?.api_port || !row.api_secret) return undefined;
      return { port: row.api_port, secret: sealer.open(row.api_secret) };
    },
  };
}

export type SupervisorApis = ReturnType<typeof createSupervisorApis>;
