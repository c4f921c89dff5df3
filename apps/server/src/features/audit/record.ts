import type { FastifyRequest } from "fastify";
import type { Queryable } from "../../db/index.ts";

/**
 * Writing the audit log (docs/audit-and-webhooks.md). Callers write in the transaction of the
 * change they record, so an entry exists exactly when the change does. `details` must never hold
 * secret values (a variable's name, never its value; a key's name, never the key).
 */

/** Who acted: a user (through a session or a personal key), or a key; and from where. */
export type AuditActor = { user?: number | undefined; apiKey?: number | undefined; clientAddress?: string | undefined };

export type AuditEntry = {
  action: string;
  organization?: number | null | undefined;
  targetType?: string | undefined;
  targetId?: string | number | undefined;
  /** The user acted on (a sign-in's, a "log in as user"'s). */
  targetUser?: number | undefined;
  details?: Record<string, unknown> | undefined;
};

/** The actor of an authenticated request (client address as the trust-proxy setting decides it). */
export function auditActorOf(request: FastifyRequest): AuditActor {
  return { user: request.auth?.user?.id, apiKey: request.auth?.apiKey?.id, clientAddress: request.ip };
}

export async function recordAudit(
  q: Pick<Queryable, "query">,
  actor: AuditActor | undefined,
  entry: AuditEntry,
): Promise<void> {
  await q.query(
    `INSERT INTO "audit_event"
       (actor_user, actor_api_key, organization, action, target_type, target_id, target_user, client_address, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)`,
    [
      actor?.user ?? null,
      actor?.apiKey ?? null,
      entry.organization ?? null,
      entry.action,
      entry.targetType ?? null,
      entry.targetId === undefined ? null : String(entry.targetId),
      entry.targetUser ?? null,
      actor?.clientAddress ?? null,
      entry.details === undefined ? null : JSON.stringify(entry.details),
    ],
  );
}

/** A successful sign-in of `user`, however it happened (password, SAML, a social provider). */
export const signInEntry = (user: number, details: Record<string, unknown>): AuditEntry => ({
  action: "sign_in.succeeded",
  targetType: "user",
  targetId: user,
  targetUser: user,
  details,
});
