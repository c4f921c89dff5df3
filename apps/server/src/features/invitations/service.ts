import crypto from "node:crypto";
import { DEFAULT_FLEET_MEMBERSHIP_ROLE, INVITATION_LIFETIME_MS } from "@flotilla/domain";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";
import { refuseFleetRole } from "../fleets/membership-hooks.ts";
import { fleetInvitationMail, organizationInvitationMail } from "../mail/templates.ts";
import { fleetRoleId, idIn, organizationRoleId, type Q, userOfActor } from "../organizations/queries.ts";

const hashToken = (token: string) => crypto.createHash("sha256").update(token).digest("hex");
const validEmail = z.email();

/** The invitee email: required, trimmed, a valid address (spec 3 §5). */
function inviteeEmail(value: unknown): string {
  const email = typeof value === "string" ? value.trim() : "";
  if (email === "") throw new FlotillaError("invitee_required");
  if (email.length > 254 || !validEmail.safeParse(email).success) throw new FlotillaError("invalid_email");
  return email;
}

/** The optional message of an invitation: trimmed, empty is none, at most 1,000 characters. */
function inviteMessage(value: unknown): string | null {
  const message = typeof value === "string" ? value.trim() : "";
  if (message.length > 1000) {
    throw new FlotillaError("bad_request", "The message should not be more than 1000 characters long");
  }
  return message || null;
}

/** The invitee row of an email (one per address, case-insensitively). */
async function inviteeId(tx: Q, email: string): Promise<number> {
  const { rows } = await tx.query<{ id: number }>(
    `INSERT INTO "invitee" (email) VALUES ($1)
     ON CONFLICT (lower(email)) DO UPDATE SET email = "invitee".email RETURNING id`,
    [email],
  );
  const id = rows[0]?.id;
  if (id === undefined) throw new Error("invitee upsert returned nothing");
  return id;
}

/** A fresh random token for the invitation link; only its SHA-256 is stored, with the expiry. */
async function issueToken(tx: Q, table: "organization_invite" | "application_invite", id: number) {
  const token = crypto.randomBytes(32).toString("base64url");
  await tx.query(`UPDATE "${table}" SET token_hash = $2, expires_at = $3 WHERE id = $1`, [
    id,
    hashToken(token),
    new Date(Date.now() + INVITATION_LIFETIME_MS),
  ]);
  return token;
}

async function inviterName(tx: Q, userId: number | undefined) {
  const { rows } = await tx.query<{ username: string }>('SELECT username FROM "user" WHERE id = $1', [userId ?? null]);
  return rows[0]?.username ?? "Someone";
}

type Mail = Pick<AppContext, "config" | "mail">;

/**
 * `POST /v7/invitee__is_invited_to__organization {invitee: email, is_invited_to__organization,
 * organization_membership_role?, message?}`: the email becomes the invitee row, a token is issued
 * and the invitation mailed once the write has committed. Someone who is already a member is
 * invited all the same, as balena's API does (balena-sdk's own tests invite a member); the
 * dashboard's invite form refuses them first with invitee_already_exist (spec 3 §5). Accepting
 * leaves an existing membership as it is.
 */
export function organizationInviteHooks(ctx: Mail): ResourceHooks {
  return {
    async beforeCreate({ tx, body, actorId }) {
      const email = inviteeEmail(body.invitee);
      const organization = idIn(body.is_invited_to__organization, body.organization);
      if (organization === undefined) {
        throw new FlotillaError("bad_request", '"is_invited_to__organization" is required');
      }
      const invited = await tx.query(
        `SELECT 1 FROM "organization_invite" i JOIN "invitee" e ON e.id = i.invitee
          WHERE i.is_invited_to__organization = $1 AND lower(e.email) = lower($2)`,
        [organization, email],
      );
      if (invited.rows.length > 0) throw new FlotillaError("invitee_already_invited");
      body.invitee = await inviteeId(tx, email);
      body.organization_membership_role ??= await organizationRoleId(tx, "member");
      body.is_created_by__user = await userOfActor(tx, actorId);
      body.message = inviteMessage(body.message);
    },
    async afterCreate({ tx, id, afterCommit }) {
      const token = await issueToken(tx, "organization_invite", id);
      const { rows } = await tx.query<{ email: string; name: string; message: string | null; creator: number | null }>(
        `SELECT e.email, o.name, i.message, i.is_created_by__user AS creator FROM "organization_invite" i
           JOIN "invitee" e ON e.id = i.invitee JOIN "organization" o ON o.id = i.is_invited_to__organization
          WHERE i.id = $1`,
        [id],
      );
      const invite = rows[0];
      if (!invite) return;
      const inviter = await inviterName(tx, invite.creator ?? undefined);
      const mail = organizationInvitationMail(ctx.config.publicUrl, token, {
        organization: invite.name,
        inviter,
        message: invite.message,
      });
      afterCommit(() => ctx.mail.send(invite.email, mail).then(() => undefined));
    },
    beforeUpdate({ body }) {
      for (const name of ["invitee", "is_invited_to__organization", "organization"]) {
        if (body[name] !== undefined)
          throw new FlotillaError("bad_request", `"${name}" of an invitation cannot change`);
      }
    },
  };
}

/**
 * `POST /v7/invitee__is_invited_to__application {invitee, is_invited_to__application,
 * application_membership_role?, message?}`. As for organizations, someone who already has access
 * (a member of the fleet, an administrator of its organization) is invited all the same, as on
 * balena; the dashboard refuses first (invitee_already_exist).
 */
export function applicationInviteHooks(ctx: Mail): ResourceHooks {
  return {
    async beforeCreate({ tx, body, actorId }) {
      const email = inviteeEmail(body.invitee);
      const application = idIn(body.is_invited_to__application, body.application);
      if (application === undefined) throw new FlotillaError("bad_request", '"is_invited_to__application" is required');
      const { rows: fleets } = await tx.query<{
        id: number;
        organization: number;
        is_of__class: "fleet" | "app" | "block";
      }>('SELECT id, organization, is_of__class FROM "application" WHERE id = $1', [application]);
      const fleet = fleets[0];
      if (!fleet)
        throw new FlotillaError("bad_request", '"is_invited_to__application" does not refer to an existing row.');
      const invited = await tx.query(
        `SELECT 1 FROM "application_invite" i JOIN "invitee" e ON e.id = i.invitee
          WHERE i.is_invited_to__application = $1 AND lower(e.email) = lower($2)`,
        [application, email],
      );
      if (invited.rows.length > 0) throw new FlotillaError("invitee_already_invited");
      body.invitee = await inviteeId(tx, email);
      body.application_membership_role ??= await fleetRoleId(tx, DEFAULT_FLEET_MEMBERSHIP_ROLE);
      await refuseFleetRole(tx, fleet, Number(body.application_membership_role));
      body.is_created_by__user = await userOfActor(tx, actorId);
      body.message = inviteMessage(body.message);
    },
    async afterCreate({ tx, id, afterCommit }) {
      const token = await issueToken(tx, "application_invite", id);
      const { rows } = await tx.query<{ email: string; name: string; message: string | null; creator: number | null }>(
        `SELECT e.email, a.app_name AS name, i.message, i.is_created_by__user AS creator FROM "application_invite" i
           JOIN "invitee" e ON e.id = i.invitee JOIN "application" a ON a.id = i.is_invited_to__application
          WHERE i.id = $1`,
        [id],
      );
      const invite = rows[0];
      if (!invite) return;
      const inviter = await inviterName(tx, invite.creator ?? undefined);
      const mail = fleetInvitationMail(ctx.config.publicUrl, token, {
        fleet: invite.name,
        inviter,
        message: invite.message,
      });
      afterCommit(() => ctx.mail.send(invite.email, mail).then(() => undefined));
    },
    async beforeUpdate({ tx, ids, body }) {
      for (const name of ["invitee", "is_invited_to__application", "application"]) {
        if (body[name] !== undefined)
          throw new FlotillaError("bad_request", `"${name}" of an invitation cannot change`);
      }
      if (body.application_membership_role === undefined) return;
      const { rows } = await tx.query<{ id: number; organization: number; is_of__class: "fleet" | "app" | "block" }>(
        `SELECT DISTINCT a.id, a.organization, a.is_of__class FROM "application_invite" i
           JOIN "application" a ON a.id = i.is_invited_to__application WHERE i.id = ANY($1::int[])`,
        [ids],
      );
      for (const fleet of rows) await refuseFleetRole(tx, fleet, Number(body.application_membership_role));
    },
  };
}

/**
 * Accepts an organization invitation for `userId`: a membership with the invited role (an existing
 * membership stays as it is), and the invitation is gone. Unknown or expired: invitation_invalid.
 */
export async function acceptOrganizationInvitation(tx: Tx, token: string, userId: number) {
  const { rows } = await tx.query<{ id: number; org: number; role: number }>(
    `SELECT id, is_invited_to__organization AS org, organization_membership_role AS role FROM "organization_invite"
      WHERE token_hash = $1 AND expires_at > now() FOR UPDATE`,
    [hashToken(token)],
  );
  const invite = rows[0];
  if (!invite) throw new FlotillaError("invitation_invalid");
  await tx.query(
    `INSERT INTO "organization_membership" ("user", is_member_of__organization, organization_membership_role)
     VALUES ($1, $2, $3) ON CONFLICT ("user", is_member_of__organization) DO NOTHING`,
    [userId, invite.org, invite.role],
  );
  await tx.query('DELETE FROM "organization_invite" WHERE id = $1', [invite.id]);
  return { organization: invite.org };
}

/**
 * Accepts a fleet invitation: the user joins the fleet's organization as a member when not one
 * already (a fleet member must be an organization member), then the fleet with the invited role.
 */
export async function acceptApplicationInvitation(tx: Tx, token: string, userId: number) {
  const { rows } = await tx.query<{ id: number; app: number; role: number; org: number }>(
    `SELECT i.id, i.is_invited_to__application AS app, i.application_membership_role AS role, a.organization AS org
       FROM "application_invite" i JOIN "application" a ON a.id = i.is_invited_to__application
      WHERE i.token_hash = $1 AND i.expires_at > now() FOR UPDATE OF i`,
    [hashToken(token)],
  );
  const invite = rows[0];
  if (!invite) throw new FlotillaError("invitation_invalid");
  await tx.query(
    `INSERT INTO "organization_membership" ("user", is_member_of__organization, organization_membership_role)
     SELECT $1, $2, r.id FROM "organization_membership_role" r WHERE r.name = 'member'
     ON CONFLICT ("user", is_member_of__organization) DO NOTHING`,
    [userId, invite.org],
  );
  await tx.query(
    `INSERT INTO "user_application_membership" ("user", is_member_of__application, application_membership_role)
     VALUES ($1, $2, $3) ON CONFLICT ("user", is_member_of__application) DO UPDATE SET application_membership_role = EXCLUDED.application_membership_role`,
    [userId, invite.app, invite.role],
  );
  await tx.query('DELETE FROM "application_invite" WHERE id = $1', [invite.id]);
  return { application: invite.app };
}

export const __test = { hashToken };
