import { FREEZE_DAYS, formatDollars, invoiceDay } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { compose, type MailContent } from "../mail/templates.ts";

/**
 * The billing mails (docs/billing.md "Mails"): a receipt for each paid invoice, a failed payment,
 * past due, a warning 7 days before freezing, frozen and unfrozen. Each is sent once: the billing
 * job (one instance at a time, under its lock) claims a `billing_notice` row per organization,
 * kind and key in its transaction, and the mail goes out after it commits. They go to the
 * billing email and the organization's administrators.
 */

type Db = Pick<Queryable, "query">;

/** Days before freezing when the warning goes out. */
export const FREEZE_WARNING_DAYS = 7;

export type BillingNotice =
  | { kind: "receipt"; organization: number; name: string; invoice: string; amount: number; paidAt: Date }
  | { kind: "payment_failed"; organization: number; name: string; invoice: string; amount: number; reason: string }
  | {
      kind: "past_due" | "freeze_warning" | "frozen";
      organization: number;
      name: string;
      owed: number;
      unpaid: number;
      freezesOn: Date;
    }
  | { kind: "unfrozen"; organization: number; name: string };

async function claim(db: Db, organization: number, kind: string, key: string): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO "billing_notice" (organization, kind, key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1`,
    [organization, kind, key],
  );
  return rows.length > 0;
}

const unnoticed = (kind: string, key: string) =>
  `NOT EXISTS (SELECT 1 FROM "billing_notice" n WHERE n.organization = i.organization AND n.kind = '${kind}' AND n.key = ${key})`;

/** The notices due at `now`, claimed (in the caller's transaction). */
export async function claimDueNotices(db: Db, now: Date): Promise<BillingNotice[]> {
  const notices: BillingNotice[] = [];
  const { rows: paid } = await db.query<{
    id: number;
    organization: number;
    name: string;
    invoice_number: string;
    total_in_cents: number;
    closed_at: Date | null;
    created_at: Date;
  }>(
    `SELECT i.id, i.organization, o.name, i.invoice_number, i.total_in_cents, i.closed_at, i.created_at
       FROM "invoice" i JOIN "organization" o ON o.id = i.organization
      WHERE i.state = 'paid' AND i.total_in_cents > 0 AND ${unnoticed("receipt", "i.id::text")} ORDER BY i.id`,
  );
  for (const row of paid) {
    if (!(await claim(db, row.organization, "receipt", String(row.id)))) continue;
    notices.push({
      kind: "receipt",
      organization: row.organization,
      name: row.name,
      invoice: row.invoice_number,
      amount: Number(row.total_in_cents),
      paidAt: new Date(row.closed_at ?? row.created_at),
    });
  }
  const { rows: failed } = await db.query<{
    id: number;
    organization: number;
    name: string;
    invoice_number: string;
    total_in_cents: number;
    payment_error: string | null;
    key: string;
  }>(
    `SELECT i.id, i.organization, o.name, i.invoice_number, i.total_in_cents, i.payment_error,
            COALESCE(i.payment_reference, i.id::text) AS key
       FROM "invoice" i JOIN "organization" o ON o.id = i.organization
      WHERE i.state IN ('past_due', 'failed')
        AND ${unnoticed("payment_failed", "COALESCE(i.payment_reference, i.id::text)")} ORDER BY i.id`,
  );
  for (const row of failed) {
    if (!(await claim(db, row.organization, "payment_failed", row.key))) continue;
    notices.push({
      kind: "payment_failed",
      organization: row.organization,
      name: row.name,
      invoice: row.invoice_number,
      amount: Number(row.total_in_cents),
      reason: row.payment_error ?? "The payment was declined.",
    });
  }
  const { rows: due } = await db.query<{
    id: number;
    name: string;
    since: Date;
    is_frozen: boolean;
    owed: number;
    unpaid: number;
  }>(
    `SELECT o.id, o.name, o.has_past_due_invoice_since__date AS since, o.is_frozen,
            COALESCE(sum(i.total_in_cents), 0)::int AS owed, count(i.id)::int AS unpaid
       FROM "organization" o
       LEFT JOIN "invoice" i ON i.organization = o.id AND i.state IN ('past_due', 'failed')
      WHERE o.has_past_due_invoice_since__date IS NOT NULL
      GROUP BY o.id`,
  );
  for (const org of due) {
    const since = new Date(org.since);
    const key = since.toISOString();
    const freezesOn = new Date(since.getTime() + FREEZE_DAYS * 86_400_000);
    const warnFrom = new Date(freezesOn.getTime() - FREEZE_WARNING_DAYS * 86_400_000);
    const kinds: Array<"past_due" | "freeze_warning" | "frozen"> = ["past_due"];
    if (org.is_frozen) kinds.push("frozen");
    else if (now >= warnFrom) kinds.push("freeze_warning");
    for (const kind of kinds) {
      if (!(await claim(db, org.id, kind, key))) continue;
      notices.push({
        kind,
        organization: org.id,
        name: org.name,
        owed: Number(org.owed),
        unpaid: Number(org.unpaid),
        freezesOn,
      });
    }
  }
  // A freeze that ended: the organization's past-due episode is over (or another began).
  const { rows: thawed } = await db.query<{ organization: number; name: string; key: string }>(
    `SELECT n.organization, o.name, n.key FROM "billing_notice" n JOIN "organization" o ON o.id = n.organization
      WHERE n.kind = 'frozen' AND NOT o.is_frozen
        AND NOT EXISTS (SELECT 1 FROM "billing_notice" u
                         WHERE u.organization = n.organization AND u.kind = 'unfrozen' AND u.key = n.key)`,
  );
  for (const row of thawed) {
    if (!(await claim(db, row.organization, "unfrozen", row.key))) continue;
    notices.push({ kind: "unfrozen", organization: row.organization, name: row.name });
  }
  return notices;
}

/** Who gets an organization's billing mails: its billing email and its administrators, once each. */
export async function billingRecipients(db: Db, organization: number): Promise<string[]> {
  const { rows } = await db.query<{ email: string }>(
    `SELECT b.email FROM "billing_account" b WHERE b.organization = $1 AND b.email IS NOT NULL AND b.email <> ''
     UNION
     SELECT u.email FROM "organization_membership" m
       JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
       JOIN "user" u ON u.id = m."user"
      WHERE m.is_member_of__organization = $1 AND r.name = 'administrator' AND u.email IS NOT NULL`,
    [organization],
  );
  return [...new Set(rows.map((row) => row.email.toLowerCase()))];
}

/** The mail of a notice; links lead to the organization's billing page. */
export function noticeMail(publicUrl: string, notice: BillingNotice): MailContent {
  const billing = `${publicUrl}/orgs/${notice.organization}/billing`;
  const org = `the organization ${notice.name}`;
  switch (notice.kind) {
    case "receipt":
      return compose(
        `Receipt for invoice ${notice.invoice}: ${formatDollars(notice.amount)}`,
        [
          `Thank you: we received ${formatDollars(notice.amount)} for ${org} on ${invoiceDay(notice.paidAt)}, paying invoice ${notice.invoice}.`,
          "The invoice is attached as a PDF; all invoices are on the billing page.",
        ],
        { label: "Open billing", link: billing },
      );
    case "payment_failed":
      return compose(
        `Payment failed for invoice ${notice.invoice}`,
        [
          `We could not charge ${formatDollars(notice.amount)} for ${org} (invoice ${notice.invoice}).`,
          `The payment provider said: ${notice.reason}`,
          "Update the payment method, or pay again with it, on the billing page.",
        ],
        { label: "Fix the payment", link: `${billing}#payment-method` },
      );
    case "past_due":
      return compose(
        `${notice.name} is past due: ${formatDollars(notice.owed)} unpaid`,
        [
          `${capitalize(org)} owes ${formatDollars(notice.owed)} (${notice.unpaid} unpaid ${notice.unpaid === 1 ? "invoice" : "invoices"}).`,
          `Unless it is paid, the organization is frozen on ${invoiceDay(notice.freezesOn)}: its fleets and devices can then only be reached again once it is paid.`,
        ],
        { label: "Pay now", link: billing },
      );
    case "freeze_warning":
      return compose(
        `${notice.name} will be frozen on ${invoiceDay(notice.freezesOn)}`,
        [
          `${capitalize(org)} still owes ${formatDollars(notice.owed)} and is frozen on ${invoiceDay(notice.freezesOn)}, in ${FREEZE_WARNING_DAYS} days or less.`,
          "Pay now or update the payment method to keep using its fleets and devices.",
        ],
        { label: "Pay now", link: billing },
      );
    case "frozen":
      return compose(
        `${notice.name} is frozen`,
        [
          `${capitalize(org)} is frozen: it owes ${formatDollars(notice.owed)}, more than ${FREEZE_DAYS} days past due.`,
          "Its administrators can still open the billing page: paying what is owed unfreezes it at once.",
        ],
        { label: "Pay now", link: billing },
      );
    case "unfrozen":
      return compose(
        `${notice.name} is no longer frozen`,
        [`Thank you: ${org} is paid up and no longer frozen. Its fleets and devices can be managed again.`],
        { label: "Open billing", link: billing },
      );
  }
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
