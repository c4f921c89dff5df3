import { domainVerificationRecord, normalizeDomain } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { createTxtLookup } from "../../lib/dns.ts";
import { parseInput } from "../../lib/validation.ts";
import { auditActorOf, recordAudit } from "../audit/record.ts";
import { mayDo } from "../data-api/actions.ts";
import {
  checkDomainRecord,
  type DomainRow,
  deleteDomain,
  findDomain,
  insertDomain,
  listDomains,
  recordDomainCheck,
} from "./domains.ts";

const addBody = z.object(
  {
    domain: z
      .string({ error: "must be a domain name such as example.com" })
      .max(300, "A domain name has at most 253 characters"),
  },
  { error: 'The request body must be a JSON object such as {"domain": "example.com"}' },
);

const shown = (row: DomainRow) => ({
  id: row.id,
  organization: row.organization,
  domain: row.domain,
  state: row.state,
  /** The TXT record to publish on the domain itself. */
  verification_record: domainVerificationRecord(row.verification_token),
  created_at: new Date(row.created_at).toISOString(),
  verified_at: row.verified_at ? new Date(row.verified_at).toISOString() : null,
  last_checked_at: row.last_checked_at ? new Date(row.last_checked_at).toISOString() : null,
  last_check_error: row.last_check_error,
});

/**
 * An organization's verified domains (docs/identity.md "Verified domains"), for its
 * administrators: list, add (a pending domain and its TXT record), check (the DNS look-up that
 * verifies it) and remove. Its identity providers sign in addresses at verified domains only.
 */
export async function domainRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db } = ctx;
  const lookup = createTxtLookup(ctx.config.dnsServers);

  /** The route's organization for one who may manage its domains: 404 to non-members, 403 to members. */
  async function managedOrganization(request: FastifyRequest): Promise<number> {
    const user = requireUser(request);
    const raw = (request.params as { org: string }).org;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    const id = Number(raw);
    const { rows } = await db.query(
      `SELECT 1 FROM "organization" o WHERE o.id = $1
          AND (EXISTS (SELECT 1 FROM "organization_membership" m WHERE m.is_member_of__organization = o.id AND m."user" = $2) OR $3)`,
      [id, user.id, user.caller.globalRoles.includes("balena_admin")],
    );
    if (rows.length === 0) throw new FlotillaError("not_found", "Organization not found");
    if (!(await mayDo(db, user.caller, "organization.manage_domains", { organization: id }))) {
      throw new FlotillaError("forbidden", "Only the organization's administrators manage its domains.");
    }
    return id;
  }

  const domainId = (request: FastifyRequest) => {
    const raw = (request.params as { id: string }).id;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid domain id passed in url");
    return Number(raw);
  };
  const notFound = () => new FlotillaError("not_found", "Domain not found");

  app.get("/identity/v1/organizations/:org/domains", async (request) => {
    const organization = await managedOrganization(request);
    return { domains: (await listDomains(db, organization)).map(shown) };
  });

  app.post("/identity/v1/organizations/:org/domains", async (request, reply) => {
    const organization = await managedOrganization(request);
    const body = parseInput(addBody, request.body);
    const normalized = normalizeDomain(body.domain);
    if ("problem" in normalized) throw new FlotillaError("bad_request", `domain: ${normalized.problem}`);
    const row = await db.transaction(async (tx) => {
      const created = await insertDomain(tx, organization, normalized.domain);
      await recordAudit(tx, auditActorOf(request), {
        action: "domain.added",
        organization,
        targetType: "domain",
        targetId: created.id,
        details: { domain: created.domain },
      });
      return created;
    });
    return reply.code(201).send(shown(row));
  });

  // The check: a DNS look-up (outside any transaction), then its result stored. 200 either way:
  // the answer's `state` and `last_check_error` say what was found.
  app.post(
    "/identity/v1/organizations/:org/domains/:id/verify",
    { config: { rateLimit: { max: 30, timeWindow: "1 minute" } } },
    async (request) => {
      const organization = await managedOrganization(request);
      const id = domainId(request);
      const found = await findDomain(db, organization, id);
      if (!found) throw notFound();
      const check = await checkDomainRecord(lookup, found);
      const stored = await db.transaction(async (tx) => {
        const result = await recordDomainCheck(tx, organization, id, check);
        if (!result) throw notFound();
        const { row, previous } = result;
        if (row.state !== previous && (row.state === "verified" || row.state === "failed")) {
          await recordAudit(tx, auditActorOf(request), {
            action: row.state === "verified" ? "domain.verified" : "domain.verification_failed",
            organization,
            targetType: "domain",
            targetId: row.id,
            details: { domain: row.domain, ...(row.last_check_error ? { reason: row.last_check_error } : {}) },
          });
        }
        return row;
      });
      return shown(stored);
    },
  );

  app.delete("/identity/v1/organizations/:org/domains/:id", async (request, reply) => {
    const organization = await managedOrganization(request);
    const id = domainId(request);
    await db.transaction(async (tx) => {
      const removed = await deleteDomain(tx, organization, id);
      if (!removed) throw notFound();
      await recordAudit(tx, auditActorOf(request), {
        action: "domain.removed",
        organization,
        targetType: "domain",
        targetId: id,
        details: { domain: removed.domain },
      });
    });
    return reply.code(204).send();
  });
}
