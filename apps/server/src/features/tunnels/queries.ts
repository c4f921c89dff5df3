import type { Queryable } from "../../db/index.ts";

/** SQL of device tunnels: one audit row per tunnel. */

export type TunnelAudit = {
  user: number;
  device: string;
  deviceId: number;
  port: number;
  via: "ssh" | "connect";
  startedAt: Date;
  endedAt: Date;
  connected: boolean;
  endReason: string;
  bytesToDevice: number;
  bytesFromDevice: number;
};

/** An `audit_event` row (action `device_tunnel`) for an ended tunnel. */
export async function insertTunnelAudit(db: Pick<Queryable, "query">, row: TunnelAudit): Promise<void> {
  await db.query(
    `INSERT INTO "audit_event" (actor_user, organization, action, target_type, target_id, details)
     VALUES ($1, (SELECT a.organization FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application
                   WHERE d.id = $3), 'device_tunnel', 'device', $3::text, $2::jsonb)`,
    [
      row.user,
      JSON.stringify({
        device: row.device,
        device_id: row.deviceId,
        port: row.port,
        via: row.via,
        started_at: row.startedAt.toISOString(),
        ended_at: row.endedAt.toISOString(),
        connected: row.connected,
        end_reason: row.endReason,
        bytes_to_device: row.bytesToDevice,
        bytes_from_device: row.bytesFromDevice,
      }),
      row.deviceId,
    ],
  );
}
