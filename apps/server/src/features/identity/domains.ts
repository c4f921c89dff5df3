import crypto from "node:crypto";
import {
  type DomainState,
  domainVerificationRecord,
  emailDomain,
  MAX_DOMAINS_PER_ORGANIZATION,
} from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { dnsFailureKind, type TxtLookup } from "../../lib/dns.ts";
import { recordAudit } from "../audit/record.ts";

type Db = Pick<Queryable, "query">;

/**
 * Verified domains (docs/identity.md "Verified domains"). An organization adds an email domain,
 * publishes `flotilla-verification={token}` as a TXT record on it, and asks for a check; once
 * found, the domain is verified and the organization's identity providers may create and sign
 * in accounts at it. A provider may assert only addresses at domains one of its organizations
 * has verified, and a user who proves control of their address by mail drops the links of
 * providers that may not.
 */

export type DomainRow = {
  id: number;
  created_at: Date;
  organization: number;
  domain: string;
  verification_token: string;
  state: DomainState;
  verified_at: Date | null;
  last_checked_at: Date | null;
  last_check_error: string | null;
};

const COLUMNS = `id, created_at, organization, domain, verification_token, state, verified_at, last_checked_at, last_check_error`;

export async function listDomains(db: Db, organization: number): Promise<DomainRow[]> {
  const { rows } = await db.query<DomainRow>(
    `SELECT ${COLUMNS} FROM "organization_domain" WHERE organization = $1 ORDER BY domain`,
    [organization],
  );
  return rows;
}

export async function findDomain(db: Db, organization: number, id: number): Promise<DomainRow | undefined> {
  const { rows } = await db.query<DomainRow>(
    `SELECT ${COLUMNS} FROM "organization_domain" WHERE organization = $1 AND id = $2`,
    [organization, id],
  );
  return rows[0];
}

/** Adds a pending domain with a new token; one organization names a domain once. */
export async function insertDomain(db: Db, organization: number, domain: string): Promise<DomainRow> {
  const { rows: count } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "organization_domain" WHERE organization = $1`,
    [organization],
  );
  if ((count[0]?.n ?? 0) >= MAX_DOMAINS_PER_ORGANIZATION) {
    throw new FlotillaError("bad_request", `An organization has at most ${MAX_DOMAINS_PER_ORGANIZATION} domains.`);
  }
  const { rows } = await db.query<DomainRow>(
    `INSERT INTO "organization_domain" (organization, domain, verification_token) VALUES ($1, $2, $3)
     ON CONFLICT (organization, domain) DO NOTHING RETURNING ${COLUMNS}`,
    [organization, domain, crypto.randomBytes(16).toString("hex")],
  );
  if (!rows[0]) throw new FlotillaError("conflict", `${domain} is already one of this organization's domains.`);
  return rows[0];
}

export async function deleteDomain(db: Db, organization: number, id: number): Promise<DomainRow | undefined> {
  const { rows } = await db.query<DomainRow>(
    `DELETE FROM "organization_domain" WHERE organization = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [organization, id],
  );
  return rows[0];
}

/** What one DNS check found: the record (verified), a final "not there", or no answer from DNS. */
export type DomainCheck = { outcome: "found" } | { outcome: "missing" | "unavailable"; message: string };

/** Looks for the domain's TXT record `flotilla-verification={token}`. Never throws. */
export async function checkDomainRecord(lookup: TxtLookup, row: Pick<DomainRow, "domain" | "verification_token">) {
  const expected = domainVerificationRecord(row.verification_token);
  let records: string[];
  try {
    records = await lookup(row.domain);
  } catch (error) {
    const kind = dnsFailureKind(error);
    if (kind === "unavailable") {
      const code = (error as { code?: unknown }).code;
      return {
        outcome: "unavailable",
        message: `The DNS look-up of ${row.domain} failed${typeof code === "string" ? ` (${code})` : ""}. Please try again later.`,
      } satisfies DomainCheck;
    }
    return {
      outcome: "missing",
      message:
        kind === "no_domain"
          ? `${row.domain} was not found in DNS. Check the spelling of the domain.`
          : `No TXT record was found at ${row.domain}. Publish ${expected} there and check again.`,
    } satisfies DomainCheck;
  }
  if (records.some((record) => record.trim() === expected)) return { outcome: "found" } satisfies DomainCheck;
  const other = records.some((record) => record.trim().startsWith("flotilla-verification="));
  return {
    outcome: "missing",
    message: other
      ? `The TXT record at ${row.domain} has another verification token. Publish ${expected} there and check again.`
      : `The TXT records at ${row.domain} do not include ${expected}. Publish it there and check again.`,
  } satisfies DomainCheck;
}

/**
 * Stores a check's result (in the caller's transaction; the row is locked while it is decided).
 * Found: verified. Not found: a pending domain stays pending, a verified (or failed) one is
 * failed; either way with the reason. DNS not answering changes no state, only the reason.
 * Answers the row as stored and the state it had before; undefined when it is gone.
 */
export async function recordDomainCheck(
  db: Db,
  organization: number,
  id: number,
  check: DomainCheck,
): Promise<{ row: DomainRow; previous: DomainState } | undefined> {
  const { rows: current } = await db.query<{ state: DomainState }>(
    `SELECT state FROM "organization_domain" WHERE organization = $1 AND id = $2 FOR UPDATE`,
    [organization, id],
  );
  const previous = current[0]?.state;
  if (!previous) return undefined;
  const state: DomainState =
    check.outcome === "found"
      ? "verified"
      : check.outcome === "missing" && previous !== "pending"
        ? "failed"
        : previous;
  const { rows } = await db.query<DomainRow>(
    `UPDATE "organization_domain" SET state = $3, last_checked_at = now(), last_check_error = $4,
            verified_at = CASE WHEN $3 = 'verified' AND state <> 'verified' THEN now() ELSE verified_at END
      WHERE organization = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [organization, id, state, check.outcome === "found" ? null : check.message],
  );
  const row = rows[0];
  return row ? { row, previous } : undefined;
}

/** SQL: organization `org` has verified `domain` (both SQL expressions). */
const verifiedBy = (org: string, domain: string) =>
  `EXISTS (SELECT 1 FROM "organization_domain" od WHERE od.organization = ${org} AND od.domain = ${domain} AND od.state = 'verified')`;

/** SQL: one of provider `provider`'s organizations has verified `domain`. */
const providerVouchesFor = (provider: string, domain: string) =>
  `EXISTS (SELECT 1 FROM "identity_provider_membership" ipm
            WHERE ipm.is_authorized_by__identity_provider = ${provider} AND ${verifiedBy("ipm.organization", domain)})`;

/**
 * Refuses an address the identity provider may not sign in: its domain is not verified by any
 * of the provider's organizations (`saml_domain_not_verified`, naming the domain). An address
 * without a usable domain is refused the same way.
 */
export async function requireVouchedAddress(db: Db, providerId: number, email: string): Promise<void> {
  const domain = emailDomain(email);
  if (domain) {
    const { rows } = await db.query(`SELECT 1 WHERE ${providerVouchesFor("$1", "$2")}`, [providerId, domain]);
    if (rows.length > 0) return;
  }
  const shown = domain ?? email.slice(email.lastIndexOf("@") + 1).slice(0, 253);
  throw new FlotillaError("saml_domain_not_verified", undefined, {
    params: { domain: shown },
    extra: { domain: shown },
  });
}

/**
 * The user proved by mail that they control `email` (a completed password reset or email
 * verification): links to identity providers none of whose organizations verified that
 * address's domain are removed, so a provider that created or linked the account without the
 * right to (before domains were verified, or with an address it did not own) signs nobody in
 * any more. Each removal is in the audit log of the provider's organizations. Answers the
 * providers whose links went.
 */
export async function dropUnvouchedSamlLinks(db: Db, userId: number, email: string): Promise<number[]> {
  const domain = emailDomain(email) ?? "";
  const { rows } = await db.query<{ provider: number; id: number }>(
    `DELETE FROM "saml_account" s WHERE s.belongs_to__user = $1 AND NOT ${providerVouchesFor("s.was_generated_by__identity_provider", "$2")}
     RETURNING s.id, s.was_generated_by__identity_provider AS provider`,
    [userId, domain],
  );
  for (const removed of rows) {
    const { rows: orgs } = await db.query<{ organization: number }>(
      `SELECT organization FROM "identity_provider_membership" WHERE is_authorized_by__identity_provider = $1`,
      [removed.provider],
    );
    for (const { organization } of orgs.length > 0 ? orgs : [{ organization: null }]) {
      await recordAudit(
        db,
        { user: userId },
        {
          action: "identity_provider.account_unlinked",
          organization,
          targetType: "identity_provider",
          targetId: removed.provider,
          targetUser: userId,
          details: { saml_account: removed.id, reason: "email_proved_by_mail", domain },
        },
      );
    }
  }
  return rows.map((r) => r.provider);
}
