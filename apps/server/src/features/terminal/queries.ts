import type { Queryable } from "../../db/index.ts";

/** SQL of the web terminal: what a session needs to know of its device, and its audit rows. */

type Db = Pick<Queryable, "query">;

export type TerminalDevice = {
  id: number;
  uuid: string;
  os_version: string | null;
  is_in_local_mode: boolean;
};

export async function terminalDevice(db: Db, uuid: string): Promise<TerminalDevice | undefined> {
  const { rows } = await db.query<TerminalDevice>(
    `SELECT d.id, d.uuid, d.os_version,
            EXISTS (SELECT 1 FROM "device_config_variable" lm WHERE lm.device = d.id
               AND lm.name IN ('RESIN_SUPERVISOR_LOCAL_MODE', 'BALENA_SUPERVISOR_LOCAL_MODE')
               AND lm.value IN ('1', 'true')) AS is_in_local_mode
       FROM "device" d WHERE d.uuid = $1`,
    [uuid],
  );
  return rows[0];
}

/**
 * The services whose container runs on the device now (its image install says Running), of the
 * release it runs when it reported one (older releases' installs may linger).
 */
export async function runningServices(db: Db, deviceId: number): Promise<string[]> {
  const { rows } = await db.query<{ service_name: string }>(
    `SELECT DISTINCT s.service_name
       FROM "image_install" ii
       JOIN "device" d ON d.id = ii.device
       JOIN "image" i ON i.id = ii.installs__image
       JOIN "service" s ON s.id = i.is_a_build_of__service
      WHERE ii.device = $1 AND lower(ii.status) = 'running'
        AND (d.is_running__release IS NULL OR ii.is_provided_by__release = d.is_running__release)`,
    [deviceId],
  );
  return rows.map((row) => row.service_name);
}

export type TerminalAudit = {
  user: number;
  device: string;
  deviceId: number;
  target: string;
  via: "web" | "ssh";
  startedAt: Date;
  endedAt: Date;
  connected: boolean;
  endReason: string;
};

/** One `audit_event` row per ended session (action `terminal_session`). */
export async function insertTerminalAudits(db: Db, sessions: TerminalAudit[]): Promise<void> {
  if (sessions.length === 0) return;
  const rows = sessions.map((s) => ({
    actor_user: s.user,
    details: {
      device: s.device,
      device_id: s.deviceId,
      target: s.target,
      via: s.via,
      started_at: s.startedAt.toISOString(),
      ended_at: s.endedAt.toISOString(),
      connected: s.connected,
      end_reason: s.endReason,
    },
  }));
  await db.query(
    `INSERT INTO "audit_event" (actor_user, organization, action, target_type, target_id, details)
     SELECT v.actor_user,
            (SELECT a.organization FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application
              WHERE d.id = (v.details->>'device_id')::int),
            'terminal_session', 'device', v.details->>'device_id', v.details
       FROM jsonb_to_recordset($1::jsonb) AS v(actor_user int, details jsonb)`,
    [JSON.stringify(rows)],
  );
}
