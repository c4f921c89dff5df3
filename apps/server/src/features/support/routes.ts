import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import fastifyMultipart from "@fastify/multipart";
import {
  SUPPORT_ATTACHMENT_LIMIT_MB,
  SUPPORT_ATTACHMENT_MAX_BYTES,
  SUPPORT_TICKET_MAX_ATTACHMENTS,
  SUPPORT_TICKET_MAX_CCS,
  SUPPORT_TICKET_PRIORITIES,
  SUPPORT_TICKET_STATUSES,
} from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { supportTierOf } from "../billing/service.ts";
import { supportNewTicketStaffMail, supportReplyMail, supportRequesterReplyStaffMail } from "../mail/templates.ts";
import { findUserById, type User } from "../users/service.ts";
import { checkCustomFields, type FilledField, filledForm, localTicketFields, type TicketField } from "./fields.ts";
import { attachmentType, cleanFileName, storedPathOf } from "./files.ts";
import { type ZendeskClient, zendeskClient } from "./zendesk.ts";

type Q = Pick<Queryable, "query">;

/** Uploads never named by a ticket are removed after a day. */
const UNCLAIMED_LIFETIME = "1 day";
/** Unclaimed uploads one user may hold at once (a bound on the disk a user can fill). */
const MAX_UNCLAIMED_PER_USER = 2 * SUPPORT_TICKET_MAX_ATTACHMENTS;
const STAFF_ROLES = ["balena_admin", "support_agent"];

const emailAddress = z.email("must be an email address");
const uploadTokens = z.array(z.string().min(1).max(100)).max(SUPPORT_TICKET_MAX_ATTACHMENTS).optional();

/**
 * The submit-ticket body (spec 3 §7): Zendesk's ticket shape. The system fields are keyed by
 * their type (`subject`, `description` or `comment.body`, `priority`, `type`), the others are
 * `custom_fields: [{id, value}]`; `comment.uploads` are the tokens of upload-attachment; copies go
 * to `email_ccs` ([{user_email}] or addresses) or `cc` (comma-separated, the form's field).
 */
const submitBody = z.object({
  subject: z.string().trim().min(1, "is required").max(250, "must be at most 250 characters"),
  description: z.string().trim().max(65_000).optional(),
  comment: z
    .object({
      body: z.string().trim().max(65_000, "must be at most 65000 characters").optional(),
      uploads: uploadTokens,
    })
    .optional(),
  priority: z.enum(SUPPORT_TICKET_PRIORITIES, { error: "must be low, normal, high or urgent" }).optional(),
  type: z.enum(["problem", "incident", "question", "task"]).optional(),
  email_ccs: z
    .array(z.union([z.string(), z.object({ user_email: z.string() })]))
    .max(SUPPORT_TICKET_MAX_CCS)
    .optional(),
  cc: z.string().max(5000).optional(),
  custom_fields: z
    .array(z.object({ id: z.coerce.number().int().positive(), value: z.unknown() }))
    .max(100)
    .optional(),
  organization: z.unknown().optional(),
});

const replyBody = z.object({
  body: z.string().trim().min(1, "is required").max(65_000, "must be at most 65000 characters"),
  uploads: uploadTokens,
});

const staffReplyBody = replyBody.extend({
  status: z.enum(SUPPORT_TICKET_STATUSES, { error: "must be open, pending or solved" }).optional(),
});

const staffPatchBody = z
  .object({
    status: z.enum(SUPPORT_TICKET_STATUSES, { error: "must be open, pending or solved" }).optional(),
    priority: z.enum(SUPPORT_TICKET_PRIORITIES, { error: "must be low, normal, high or urgent" }).optional(),
  })
  .strict();

const listQuery = z.object({
  organization: z.coerce.number().int().positive().max(2_147_483_647).optional(),
  status: z.enum(SUPPORT_TICKET_STATUSES, { error: "must be open, pending or solved" }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

const idOf = (raw: string | undefined) => {
  if (!raw || !/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
  return Number(raw);
};

/** The copied addresses: valid, lowercase, without duplicates or the requester's own. */
function ccAddresses(body: z.output<typeof submitBody>, requesterEmail: string): string[] {
  const given = [
    ...(body.email_ccs ?? []).map((entry) => (typeof entry === "string" ? entry : entry.user_email)),
    ...(body.cc ?? "").split(","),
  ]
    .map((address) => address.trim().toLowerCase())
    .filter((address) => address !== "");
  for (const address of given) {
    if (!emailAddress.safeParse(address).success) {
      throw new FlotillaError("invalid_email", `email_ccs: ${address} is not an email address`);
    }
  }
  const unique = [...new Set(given)].filter((address) => address !== requesterEmail.toLowerCase());
  if (unique.length > SUPPORT_TICKET_MAX_CCS) {
    throw new FlotillaError("bad_request", `email_ccs: at most ${SUPPORT_TICKET_MAX_CCS} addresses`);
  }
  return unique;
}

type TicketRow = {
  id: number;
  organization: number;
  organization_name: string;
  requester: number | null;
  requester_username: string | null;
  requester_email: string;
  subject: string;
  description: string;
  status: string;
  priority: string;
  custom_fields: unknown;
  form: FilledField[] | null;
  email_ccs: string[];
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
  comment_count: number;
};

const TICKET_COLUMNS = `t.id, t.organization, o.name AS organization_name, t.requester, u.username AS requester_username,
  t.requester_email, t.subject, t.description, t.status, t.priority, t.custom_fields, t.form, t.email_ccs, t.external_id,
  t.created_at, t.updated_at,
  (SELECT count(*)::int FROM "support_ticket_comment" c WHERE c.ticket = t.id) AS comment_count`;
const TICKET_FROM = `"support_ticket" t JOIN "organization" o ON o.id = t.organization LEFT JOIN "user" u ON u.id = t.requester`;

/**
 * Who reads a ticket besides platform staff: members of its organization who are its requester,
 * are copied on it with their verified address, or administer the organization. `$1` is the user.
 */
const VISIBLE_TO_USER = `EXISTS (
  SELECT 1 FROM "organization_membership" m JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
   WHERE m.is_member_of__organization = t.organization AND m."user" = $1
     AND (t.requester = $1 OR r.name = 'administrator'
          OR EXISTS (SELECT 1 FROM "user" me WHERE me.id = $1 AND me.is_verified AND lower(me.email) = ANY(t.email_ccs))))`;

function ticketSummary(row: TicketRow, forStaff: boolean) {
  return {
    id: Number(row.id),
    organization: { id: Number(row.organization), name: row.organization_name },
    requester: row.requester === null ? null : { id: Number(row.requester), username: row.requester_username },
    ...(forStaff ? { requester_email: row.requester_email } : {}),
    subject: row.subject,
    status: row.status,
    priority: row.priority,
    comment_count: Number(row.comment_count),
    external_id: row.external_id,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

type AttachmentRow = {
  id: number;
  comment: number | null;
  file_name: string;
  content_type: string;
  size: number;
  created_at: Date;
};
const attachmentInfo = (row: AttachmentRow) => ({
  id: Number(row.id),
  file_name: row.file_name,
  content_type: row.content_type,
  size: Number(row.size),
  href: `/support/v1/attachments/${row.id}`,
});

/**
 * Support tickets (spec 3 §2 Support drawer, §3, §4 "Support ticket", §5, §7; docs/support.md):
 * - the ticket form at Zendesk's addresses, `/zendesk/v1/{orgId}/ticket-fields`, `…/upload-attachment`,
 *   `…/submit-ticket`, for members of an organization whose plan includes private support and who have a verified email;
 * - `/support/v1/organizations/{orgId}/access`: what the drawer shows (tier, SLA, email state);
 * - the requester's side, `/support/v1/tickets…`, and the platform staff's inbox, `/support/v1/staff/tickets…`;
 * - attachments, `/support/v1/attachments/{id}`, for those who read their ticket.
 * With Zendesk configured, fields, files and new tickets go to Zendesk; a record stays here.
 */
export async function supportRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, config } = ctx;
  const zendesk: ZendeskClient | undefined = config.zendesk ? zendeskClient(config.zendesk, app.log) : undefined;
  await app.register(fastifyMultipart);

  const ticketFields = (): Promise<TicketField[]> =>
    zendesk ? zendesk.ticketFields() : Promise.resolve(localTicketFields(config.supportTicketFields));

  const isStaff = (user: ReturnType<typeof requireUser>) =>
    user.caller.globalRoles.some((role) => STAFF_ROLES.includes(role));

  /** The organization of the route for one of its members (404 for anybody else, platform staff included). */
  async function memberOrganization(request: FastifyRequest) {
    const user = requireUser(request);
    const id = idOf((request.params as { org?: string }).org);
    const { rows } = await db.query<{ name: string; role: string }>(
      `SELECT o.name, r.name AS role FROM "organization" o
         JOIN "organization_membership" m ON m.is_member_of__organization = o.id AND m."user" = $2
         JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
        WHERE o.id = $1`,
      [id, user.id],
    );
    const row = rows[0];
    if (!row) throw new FlotillaError("not_found", "Organization not found");
    return { id, name: row.name, role: row.role, user };
  }

  /**
   * Who may open tickets and upload files for them (spec 3 §2, §4, §6): any member, administrator
   * or not, of an organization whose plan includes private support, with an email that is verified.
   */
  async function ticketWriter(request: FastifyRequest) {
    const organization = await memberOrganization(request);
    if (!(await supportTierOf(db, organization.id)).includes_private_support) {
      throw new FlotillaError("no_private_support");
    }
    const account = await findUserById(db.orm, organization.user.id);
    if (!account) throw new FlotillaError("not_logged_in");
    if (!account.email) throw new FlotillaError("support_email_required");
    if (!account.is_verified) throw new FlotillaError("support_email_unverified");
    return { organization, account: account as User & { email: string } };
  }

  /** A ticket the caller reads: as staff (`staff`), or as a member who sees it; 404 otherwise. */
  async function readableTicket(tx: Q, userId: number, ticketId: number, staff: boolean): Promise<TicketRow> {
    const { rows } = await tx.query<TicketRow>(
      `SELECT ${TICKET_COLUMNS} FROM ${TICKET_FROM} WHERE t.id = $2 AND ($3 OR ${VISIBLE_TO_USER})`,
      [userId, ticketId, staff],
    );
    const row = rows[0];
    if (!row) throw new FlotillaError("support_ticket_not_found", undefined, { params: { id: ticketId } });
    return row;
  }

  /**
   * Every field of the ticket's form with the requester's values: as kept at submit time, or, for
   * a ticket from before forms were kept, today's form over the ticket's columns.
   */
  async function formOf(row: TicketRow): Promise<FilledField[]> {
    if (Array.isArray(row.form)) return row.form;
    const custom = Array.isArray(row.custom_fields)
      ? (row.custom_fields as { id: number; value: string | number | boolean | null }[])
      : [];
    const fields = await ticketFields().catch(() => localTicketFields(config.supportTicketFields));
    return filledForm(fields, { subject: row.subject, description: row.description, priority: row.priority, custom });
  }

  async function thread(row: TicketRow, forStaff: boolean) {
    const [{ rows: comments }, { rows: attachments }] = await Promise.all([
      db.query<{
        id: number;
        author: number | null;
        username: string | null;
        body: string;
        is_staff: boolean;
        created_at: Date;
      }>(
        `SELECT c.id, c.author, u.username, c.body, c.is_staff, c.created_at FROM "support_ticket_comment" c
           LEFT JOIN "user" u ON u.id = c.author WHERE c.ticket = $1 ORDER BY c.created_at, c.id`,
        [row.id],
      ),
      db.query<AttachmentRow>(
        `SELECT id, comment, file_name, content_type, size, created_at FROM "support_attachment"
          WHERE ticket = $1 ORDER BY id`,
        [row.id],
      ),
    ]);
    return {
      ...ticketSummary(row, forStaff),
      description: row.description,
      custom_fields: row.custom_fields,
      ...(forStaff ? { form: await formOf(row) } : {}),
      email_ccs: row.email_ccs,
      attachments: attachments.filter((a) => a.comment === null).map(attachmentInfo),
      comments: comments.map((comment) => ({
        id: Number(comment.id),
        author: comment.author === null ? null : { id: Number(comment.author), username: comment.username },
        body: comment.body,
        is_staff: comment.is_staff,
        created_at: new Date(comment.created_at).toISOString(),
        attachments: attachments.filter((a) => Number(a.comment) === Number(comment.id)).map(attachmentInfo),
      })),
    };
  }

  /**
   * Gives the uploader's unclaimed uploads (by token) to a ticket, or a reply of it; every token
   * must be one, and the ticket stays within its attachment limit.
   */
  async function claimUploads(
    tx: Q,
    tokens: string[],
    to: { ticket: number; comment: number | null; organization: number; uploader: number },
  ): Promise<{ id: number; external_token: string | null }[]> {
    const wanted = [...new Set(tokens)];
    if (wanted.length === 0) return [];
    const { rows: counted } = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM "support_attachment" WHERE ticket = $1',
      [to.ticket],
    );
    if (Number(counted[0]?.n ?? 0) + wanted.length > SUPPORT_TICKET_MAX_ATTACHMENTS) {
      throw new FlotillaError("support_attachment_too_many", undefined, {
        params: { limit: SUPPORT_TICKET_MAX_ATTACHMENTS },
      });
    }
    const { rows } = await tx.query<{ id: number; token: string; external_token: string | null }>(
      `UPDATE "support_attachment" SET ticket = $2, comment = $3
        WHERE token = ANY($1::text[]) AND ticket IS NULL AND organization = $4 AND uploaded_by = $5
        RETURNING id, token, external_token`,
      [wanted, to.ticket, to.comment, to.organization, to.uploader],
    );
    const missing = wanted.find((token) => !rows.some((row) => row.token === token));
    if (missing !== undefined) {
      throw new FlotillaError("support_upload_invalid", undefined, { params: { token: missing.slice(0, 100) } });
    }
    return rows.map((row) => ({ id: Number(row.id), external_token: row.external_token }));
  }

  /** Removes uploads nobody claimed within a day, rows and files. */
  async function removeStaleUploads() {
    const { rows } = await db.query<{ stored_path: string }>(
      `DELETE FROM "support_attachment" WHERE ticket IS NULL AND created_at < now() - interval '${UNCLAIMED_LIFETIME}'
        RETURNING stored_path`,
    );
    await Promise.all(rows.map((row) => fs.rm(path.join(config.dataDir, row.stored_path), { force: true })));
  }

  /** Mails a staff reply to the requester and the copied addresses, once it is committed. */
  function mailReply(ticket: TicketRow, status: string, reply: { author: string; body: string }) {
    const mail = supportReplyMail(config.publicUrl, { id: Number(ticket.id), subject: ticket.subject, status }, reply);
    const to = [...new Set([ticket.requester_email, ...ticket.email_ccs].map((a) => a.toLowerCase()))];
    void Promise.all(to.map((address) => ctx.mail.send(address, mail)));
  }

  /**
   * Mails every platform staff member (`balena_admin`, `support_agent`) with an address they may
   * be mailed at (verified, or verification not required of them), the author of the event left
   * out, once the event is committed. The event's `staff_notified_at` is claimed first, so
   * whichever instance or call gets here, staff are mailed about one event at most once. With
   * Zendesk, Zendesk tells its agents: no mail from here.
   */
  async function mailStaffOnce(
    event: { table: "support_ticket" | "support_ticket_comment"; id: number; author: number },
    mail: () => Promise<ReturnType<typeof supportNewTicketStaffMail>>,
  ) {
    if (zendesk) return;
    const { rows: claimed } = await db.query(
      `UPDATE "${event.table}" SET staff_notified_at = now() WHERE id = $1 AND staff_notified_at IS NULL RETURNING id`,
      [event.id],
    );
    if (claimed.length === 0) return;
    const { rows: staff } = await db.query<{ email: string }>(
      `SELECT DISTINCT lower(u.email) AS email FROM "user" u
         JOIN "user__has__role" h ON h."user" = u.id JOIN "role" r ON r.id = h.role
        WHERE r.name = ANY($1::text[]) AND u.id <> $2 AND coalesce(u.email, '') <> ''
          AND (u.is_verified OR NOT u.must_be_verified)`,
      [STAFF_ROLES, event.author],
    );
    if (staff.length === 0) return;
    const content = await mail();
    await Promise.all(staff.map((row) => ctx.mail.send(row.email, content)));
  }

  const attachmentNames = async (ticket: number, comment: number | null) =>
    (
      await db.query<{ file_name: string }>(
        `SELECT file_name FROM "support_attachment" WHERE ticket = $1 AND comment IS NOT DISTINCT FROM $2 ORDER BY id`,
        [ticket, comment],
      )
    ).rows.map((row) => row.file_name);

  /** A new ticket, to staff (after commit; a failure is logged, the ticket stands). */
  function mailStaffNewTicket(ticket: TicketRow, form: FilledField[]) {
    const id = Number(ticket.id);
    mailStaffOnce({ table: "support_ticket", id, author: Number(ticket.requester) }, async () =>
      supportNewTicketStaffMail(
        config.publicUrl,
        {
          id,
          subject: ticket.subject,
          organization: ticket.organization_name,
          requester: ticket.requester_username ?? ticket.requester_email,
          requesterEmail: ticket.requester_email,
        },
        form,
        await attachmentNames(id, null),
      ),
    ).catch((error) => app.log.error({ err: error, ticket: id }, "support: mailing staff about a new ticket failed"));
  }

  /** A reply of the requester's side, to staff (after commit). */
  function mailStaffReply(ticket: TicketRow, comment: number, author: { id: number; username: string }, body: string) {
    const id = Number(ticket.id);
    mailStaffOnce({ table: "support_ticket_comment", id: comment, author: author.id }, async () =>
      supportRequesterReplyStaffMail(
        config.publicUrl,
        { id, subject: ticket.subject, organization: ticket.organization_name },
        { author: author.username, body, attachments: await attachmentNames(id, comment) },
      ),
    ).catch((error) => app.log.error({ err: error, ticket: id }, "support: mailing staff about a reply failed"));
  }

  const refuseInZendesk = () => {
    if (zendesk) throw new FlotillaError("support_tickets_in_zendesk");
  };

  // ---- The drawer's calls -------------------------------------------------------------------

  app.get("/support/v1/organizations/:org/access", async (request) => {
    const organization = await memberOrganization(request);
    const tier = await supportTierOf(db, organization.id);
    const account = await findUserById(db.orm, organization.user.id);
    return {
      can_access_support: tier.includes_private_support,
      support_tier: tier,
      is_administrator: organization.role === "administrator",
      email: { present: Boolean(account?.email), verified: Boolean(account?.email && account.is_verified) },
    };
  });

  app.get("/zendesk/v1/:org/ticket-fields", async (request) => {
    await memberOrganization(request);
    return ticketFields();
  });

  app.post("/zendesk/v1/:org/upload-attachment", async (request, reply) => {
    const { organization, account } = await ticketWriter(request);
    if (!request.isMultipart()) {
      throw new FlotillaError("bad_request", "Send the file as multipart/form-data");
    }
    await removeStaleUploads();
    const { rows: pending } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM "support_attachment" WHERE ticket IS NULL AND uploaded_by = $1',
      [account.id],
    );
    if (Number(pending[0]?.n ?? 0) >= MAX_UNCLAIMED_PER_USER) {
      throw new FlotillaError(
        "too_many_requests",
        "Too many files uploaded without a ticket: submit the ticket first.",
      );
    }
    const tooLarge = () =>
      new FlotillaError("support_attachment_exceed_limit", undefined, {
        params: { limit: SUPPORT_ATTACHMENT_LIMIT_MB },
      });
    let file: { name: string; bytes: Buffer } | undefined;
    try {
      const part = await request.file({ limits: { fileSize: SUPPORT_ATTACHMENT_MAX_BYTES, files: 1, fields: 5 } });
      if (part) {
        const bytes = await part.toBuffer();
        if (part.file.truncated) throw tooLarge();
        file = { name: cleanFileName(part.filename || "attachment"), bytes };
      }
    } catch (error) {
      if (error instanceof FlotillaError) throw error;
      if ((error as { code?: string }).code === "FST_REQ_FILE_TOO_LARGE") throw tooLarge();
      throw new FlotillaError("bad_request", `The multipart body could not be read: ${(error as Error).message}`);
    }
    if (!file || file.bytes.length === 0) throw new FlotillaError("bad_request", "file: a non-empty file is required");
    const contentType = attachmentType(file.name, file.bytes);
    if (!contentType) {
      throw new FlotillaError("support_attachment_type_not_allowed", undefined, { params: { filename: file.name } });
    }
    const externalToken = zendesk ? await zendesk.upload({ name: file.name, contentType, bytes: file.bytes }) : null;
    const token = crypto.randomBytes(24).toString("base64url");
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO "support_attachment" (organization, uploaded_by, token, file_name, content_type, size, stored_path, external_token)
       VALUES ($1, $2, $3, $4, $5, $6, '', $7) RETURNING id`,
      [organization.id, account.id, token, file.name, contentType, file.bytes.length, externalToken],
    );
    const id = Number(rows[0]?.id);
    const stored = storedPathOf(organization.id, id);
    const absolute = path.join(config.dataDir, stored);
    try {
      await fs.mkdir(path.dirname(absolute), { recursive: true });
      await fs.writeFile(`${absolute}.tmp`, file.bytes);
      await fs.rename(`${absolute}.tmp`, absolute);
      await db.query('UPDATE "support_attachment" SET stored_path = $2 WHERE id = $1', [id, stored]);
    } catch (error) {
      await db.query('DELETE FROM "support_attachment" WHERE id = $1', [id]);
      await fs.rm(`${absolute}.tmp`, { force: true });
      throw error;
    }
    // Zendesk's answer to POST /api/v2/uploads, with this server's token.
    return reply.code(201).send({
      upload: {
        token,
        attachment: { id, file_name: file.name, content_type: contentType, size: file.bytes.length },
      },
    });
  });

  app.post("/zendesk/v1/:org/submit-ticket", async (request, reply) => {
    const { organization, account } = await ticketWriter(request);
    const body = parseInput(submitBody, request.body);
    const description = (body.comment?.body || body.description || "").trim();
    if (description === "") throw new FlotillaError("bad_request", "comment.body: is required");
    const fields = await ticketFields();
    for (const field of fields) {
      if (field.type === "priority" && field.required_in_portal && !body.priority) {
        throw new FlotillaError("bad_request", "priority: is required");
      }
    }
    const customFields = checkCustomFields(fields, body.custom_fields ?? []);
    const emailCcs = ccAddresses(body, account.email);
    const priority = body.priority ?? "normal";
    const form = filledForm(fields, {
      subject: body.subject,
      description,
      priority: body.priority,
      type: body.type,
      custom: customFields,
    });
    const ticket = await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: number }>(
        `INSERT INTO "support_ticket" (organization, requester, requester_email, subject, description, priority, custom_fields, email_ccs, form)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9::jsonb) RETURNING id`,
        [
          organization.id,
          account.id,
          account.email,
          body.subject,
          description,
          priority,
          JSON.stringify(customFields),
          emailCcs,
          JSON.stringify(form),
        ],
      );
      const id = Number(rows[0]?.id);
      const claimed = await claimUploads(tx, body.comment?.uploads ?? [], {
        ticket: id,
        comment: null,
        organization: organization.id,
        uploader: account.id,
      });
      if (zendesk) {
        // Inside the transaction: when Zendesk refuses, nothing is kept and the uploads stay claimable.
        const externalId = await zendesk.createTicket({
          subject: body.subject,
          body: description,
          requester: {
            name: [account.first_name, account.last_name].filter(Boolean).join(" ").trim() || account.username,
            email: account.email,
          },
          emailCcs,
          priority,
          type: body.type,
          customFields,
          uploads: claimed.map((upload) => upload.external_token).filter((token): token is string => Boolean(token)),
          organization: { id: organization.id, name: organization.name },
          localId: id,
        });
        await tx.query('UPDATE "support_ticket" SET external_id = $2 WHERE id = $1', [id, externalId]);
      }
      return readableTicket(tx, account.id, id, true);
    });
    mailStaffNewTicket(ticket, form);
    return reply.code(201).send({ ticket: ticketSummary(ticket, false) });
  });

  // ---- The requester's side -----------------------------------------------------------------

  app.get("/support/v1/tickets", async (request) => {
    const user = requireUser(request);
    const query = parseInput(listQuery, request.query);
    const { rows } = await db.query<TicketRow>(
      `SELECT ${TICKET_COLUMNS} FROM ${TICKET_FROM}
        WHERE ${VISIBLE_TO_USER} AND ($2::int IS NULL OR t.organization = $2) AND ($3::text IS NULL OR t.status = $3)
        ORDER BY t.updated_at DESC, t.id DESC LIMIT $4 OFFSET $5`,
      [user.id, query.organization ?? null, query.status ?? null, query.limit, query.offset],
    );
    return rows.map((row) => ticketSummary(row, false));
  });

  app.get("/support/v1/tickets/:id", async (request) => {
    const user = requireUser(request);
    const ticket = await readableTicket(db, user.id, idOf((request.params as { id?: string }).id), false);
    return thread(ticket, false);
  });

  app.post("/support/v1/tickets/:id/comments", async (request, reply) => {
    const user = requireUser(request);
    const body = parseInput(replyBody, request.body);
    const id = idOf((request.params as { id?: string }).id);
    const comment = await db.transaction(async (tx) => {
      const ticket = await readableTicket(tx, user.id, id, false);
      refuseInZendesk();
      const { rows } = await tx.query<{ id: number; created_at: Date }>(
        `INSERT INTO "support_ticket_comment" (ticket, author, body, is_staff) VALUES ($1, $2, $3, false)
         RETURNING id, created_at`,
        [id, user.id, body.body],
      );
      const commentId = Number(rows[0]?.id);
      await claimUploads(tx, body.uploads ?? [], {
        ticket: id,
        comment: commentId,
        organization: Number(ticket.organization),
        uploader: user.id,
      });
      // The customer answered: the ticket waits for support again (a solved one is reopened).
      await tx.query(`UPDATE "support_ticket" SET status = 'open', updated_at = now() WHERE id = $1`, [id]);
      return { id: commentId, created_at: rows[0]?.created_at, ticket };
    });
    mailStaffReply(comment.ticket, comment.id, { id: user.id, username: user.username }, body.body);
    return reply.code(201).send({
      id: comment.id,
      author: { id: user.id, username: user.username },
      body: body.body,
      is_staff: false,
      created_at: new Date(comment.created_at ?? Date.now()).toISOString(),
    });
  });

  app.get("/support/v1/attachments/:id", async (request, reply) => {
    const user = requireUser(request);
    const id = idOf((request.params as { id?: string }).id);
    const { rows } = await db.query<
      AttachmentRow & { ticket: number | null; uploaded_by: number | null; stored_path: string }
    >(
      `SELECT a.id, a.comment, a.file_name, a.content_type, a.size, a.created_at, a.ticket, a.uploaded_by, a.stored_path
         FROM "support_attachment" a WHERE a.id = $2 AND (
           (a.ticket IS NULL AND a.uploaded_by = $1)
           OR $3
           OR EXISTS (SELECT 1 FROM "support_ticket" t WHERE t.id = a.ticket AND ${VISIBLE_TO_USER}))`,
      [user.id, id, isStaff(user)],
    );
    const row = rows[0];
    if (!row || row.stored_path === "") throw new FlotillaError("not_found", "Attachment not found");
    const bytes = await fs.readFile(path.join(config.dataDir, row.stored_path)).catch(() => undefined);
    if (!bytes) throw new FlotillaError("not_found", "Attachment not found");
    const ascii = row.file_name.replace(/[^\x20-\x7e]/g, "_");
    return reply
      .type(row.content_type)
      .header(
        "content-disposition",
        `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(row.file_name)}`,
      )
      .header("x-content-type-options", "nosniff")
      .header("cache-control", "private, no-store")
      .send(bytes);
  });

  // ---- Platform staff (balena_admin, support_agent) -----------------------------------------

  const requireStaff = (request: FastifyRequest) => {
    const user = requireUser(request);
    if (!isStaff(user)) throw new FlotillaError("forbidden", "Only platform staff read the support inbox.");
    return user;
  };

  app.get("/support/v1/staff/tickets", async (request) => {
    requireStaff(request);
    const query = parseInput(listQuery, request.query);
    const { rows } = await db.query<TicketRow>(
      `SELECT ${TICKET_COLUMNS} FROM ${TICKET_FROM}
        WHERE ($1::int IS NULL OR t.organization = $1) AND ($2::text IS NULL OR t.status = $2)
        ORDER BY t.updated_at DESC, t.id DESC LIMIT $3 OFFSET $4`,
      [query.organization ?? null, query.status ?? null, query.limit, query.offset],
    );
    return rows.map((row) => ticketSummary(row, true));
  });

  app.get("/support/v1/staff/tickets/:id", async (request) => {
    const user = requireStaff(request);
    return thread(await readableTicket(db, user.id, idOf((request.params as { id?: string }).id), true), true);
  });

  app.post("/support/v1/staff/tickets/:id/comments", async (request, reply) => {
    const user = requireStaff(request);
    const body = parseInput(staffReplyBody, request.body);
    const id = idOf((request.params as { id?: string }).id);
    // An answer waits for the customer unless support says otherwise (Zendesk's "pending").
    const status = body.status ?? "pending";
    const result = await db.transaction(async (tx) => {
      const ticket = await readableTicket(tx, user.id, id, true);
      refuseInZendesk();
      if ((body.uploads ?? []).length > 0) {
        throw new FlotillaError("bad_request", "uploads: staff replies carry no attachments");
      }
      const { rows } = await tx.query<{ id: number; created_at: Date }>(
        `INSERT INTO "support_ticket_comment" (ticket, author, body, is_staff) VALUES ($1, $2, $3, true)
         RETURNING id, created_at`,
        [id, user.id, body.body],
      );
      await tx.query('UPDATE "support_ticket" SET status = $2, updated_at = now() WHERE id = $1', [id, status]);
      return { ticket, comment: rows[0] };
    });
    mailReply(result.ticket, status, { author: user.username, body: body.body });
    return reply.code(201).send({
      id: Number(result.comment?.id),
      author: { id: user.id, username: user.username },
      body: body.body,
      is_staff: true,
      created_at: new Date(result.comment?.created_at ?? Date.now()).toISOString(),
      ticket: { id, status },
    });
  });

  app.patch("/support/v1/staff/tickets/:id", async (request) => {
    const user = requireStaff(request);
    const body = parseInput(staffPatchBody, request.body);
    const id = idOf((request.params as { id?: string }).id);
    await readableTicket(db, user.id, id, true);
    await db.query(
      `UPDATE "support_ticket" SET status = coalesce($2, status), priority = coalesce($3, priority), updated_at = now()
        WHERE id = $1`,
      [id, body.status ?? null, body.priority ?? null],
    );
    return ticketSummary(await readableTicket(db, user.id, id, true), true);
  });
}
