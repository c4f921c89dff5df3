import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtInProvider, DECLINING_TEST_CARD } from "../src/features/billing/provider.ts";
import { billingNow, changePlan, runBillingJob } from "../src/features/billing/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { addTestCard } from "./support/billing.ts";
import { call } from "./support/devices.ts";
import { type MailServer, startMailServer } from "./support/mail.ts";

/**
 * The billing mails (docs/billing.md "Mails"), through a real SMTP server: a failed payment with
 * the provider's reason, past due with the amount and the freeze date, the warning 7 days before
 * freezing, frozen, then — once a new card pays — the receipt with its PDF and unfrozen. Each
 * once, however often (and however concurrently) the billing job runs.
 */
const DAY = 86_400_000;
const PUBLIC = "http://dashboard.test";
let t: TestApp;
let mail: MailServer;

beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ SMTP_URL: mail.url, FLOTILLA_PUBLIC_URL: PUBLIC });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const job = (at: Date) => runBillingJob(t.db, builtInProvider, at, { mailer: t.ctx.mail, publicUrl: PUBLIC });

const addCard = (org: number, token: string, number: string) => addTestCard(t, org, token, number);

const subjects = (to: string) => mail.to(to).map((received) => received.subject);

describe("billing mails", () => {
  it("a declined card: failed payment, past due, the warning, frozen; a new card: receipt with the PDF and unfrozen", async () => {
    const admin = await t.factories.user();
    const org = await t.factories.organization({ name: "Mailco", admins: [admin.user] });
    const billingEmail = "accounts@mailco.example";
    await call(t, "PATCH", `/billing/v1/account/${org.id}`, admin.token, {
      email: billingEmail,
      company_name: "Mailco",
    });
    expect((await addCard(org.id, admin.token, DECLINING_TEST_CARD)).status).toBe(200);
    const start = await billingNow(t.db, builtInProvider);
    const invoice = await t.db.transaction((tx) =>
      changePlan(tx, builtInProvider, org.id, { tier: "pilot-v2", cycle: "monthly" }, start),
    );
    expect(invoice?.state).toBe("past_due");

    // Two jobs at once, then again: each mail once, to the billing email and the administrator.
    await Promise.all([job(new Date(start.getTime() + 60_000)), job(new Date(start.getTime() + 60_000))]);
    await job(new Date(start.getTime() + 120_000));
    const adminEmail = String(admin.user.email);
    for (const to of [billingEmail, adminEmail]) {
      await expect.poll(() => subjects(to).length).toBe(2);
    }
    const failed = mail.to(billingEmail).find((received) => received.subject.startsWith("Payment failed"));
    expect(failed?.subject).toBe(`Payment failed for invoice ${invoice?.invoice_number}`);
    expect(failed?.text).toContain("Your card was declined.");
    expect(failed?.text).toContain(`${PUBLIC}/orgs/${org.id}/billing#payment-method`);
    const pastDue = mail.to(billingEmail).find((received) => received.subject.includes("past due"));
    expect(pastDue?.subject).toBe("Mailco is past due: $299.00 unpaid");
    const freezesOn = new Intl.DateTimeFormat("en-US", {
      timeZone: "UTC",
      month: "short",
      day: "numeric",
      year: "numeric",
    }).format(new Date(new Date(invoice?.due_on ?? 0).getTime() + 60 * DAY));
    expect(pastDue?.text).toContain(`frozen on ${freezesOn}`);

    // 53 days in: the warning; 60 days: frozen. Once each. (The renewals meanwhile are declined
    // too, each with its own failed-payment mail.)
    const count = (text: string) => subjects(billingEmail).filter((subject) => subject.includes(text)).length;
    await job(new Date(start.getTime() + 52 * DAY));
    expect(count("will be frozen")).toBe(0);
    await job(new Date(start.getTime() + 54 * DAY));
    await job(new Date(start.getTime() + 55 * DAY));
    await expect.poll(() => count(`Mailco will be frozen on ${freezesOn}`)).toBe(1);
    expect(count("is frozen")).toBe(0);
    await job(new Date(start.getTime() + 61 * DAY));
    await job(new Date(start.getTime() + 62 * DAY));
    await expect.poll(() => count("Mailco is frozen")).toBe(1);
    expect(count("Payment failed for invoice")).toBe(3);

    // A good card pays the invoices: each receipt carries its PDF, and the organization is unfrozen.
    await t.db.query(
      `INSERT INTO "billing_test_clock" (id, advanced_by_seconds) VALUES (1, 62 * 86400)
       ON CONFLICT (id) DO UPDATE SET advanced_by_seconds = 62 * 86400`,
    );
    try {
      expect((await addCard(org.id, admin.token, "4242424242424242")).status).toBe(200);
      await expect.poll(() => count("Mailco is no longer frozen")).toBe(1);
      await expect.poll(() => count("Receipt for invoice")).toBe(3);
      const receipt = mail
        .to(billingEmail)
        .find((received) => received.subject.includes(`${invoice?.invoice_number}:`));
      expect(receipt?.subject).toBe(`Receipt for invoice ${invoice?.invoice_number}: $299.00`);
      expect(receipt?.raw).toMatch(/Content-Type: application\/pdf; name=INV-\d{6}\.pdf/i);
      const { rows } = await t.db.query<{ is_frozen: boolean }>(`SELECT is_frozen FROM "organization" WHERE id = $1`, [
        org.id,
      ]);
      expect(rows[0]?.is_frozen).toBe(false);
      // Later jobs send nothing more, and nothing went twice, to either address.
      const sent = subjects(billingEmail).length;
      await job(new Date(Date.now() + 62 * DAY + 60_000));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(subjects(billingEmail)).toHaveLength(sent);
      expect(new Set(subjects(billingEmail)).size).toBe(sent);
      expect(subjects(adminEmail).sort()).toEqual(subjects(billingEmail).sort());
    } finally {
      await t.db.query(`UPDATE "billing_test_clock" SET advanced_by_seconds = 0`);
    }
  });

  it("Pay now charges the unpaid invoices with the current method and says why when it fails", async () => {
    const admin = await t.factories.user();
    const org = await t.factories.organization({ name: "Paynow", admins: [admin.user] });
    await addCard(org.id, admin.token, DECLINING_TEST_CARD);
    const start = await billingNow(t.db, builtInProvider);
    await t.db.transaction((tx) =>
      changePlan(tx, builtInProvider, org.id, { tier: "pilot-v2", cycle: "monthly" }, start),
    );
    const refused = await call(t, "POST", `/billing/v1/account/${org.id}/pay`, admin.token);
    expect(refused.status).toBe(400);
    expect(refused.json.message).toBe(
      "The payment failed: Your card was declined. Update the payment method and try again.",
    );
    // The card is replaced without paying (its own retry fails the same way first), then Pay now.
    await t.db.query(`UPDATE "payment_method" SET provider_reference = 'pm_good' WHERE organization = $1`, [org.id]);
    const paid = await call(t, "POST", `/billing/v1/account/${org.id}/pay`, admin.token);
    expect(paid.status).toBe(200);
    expect(paid.json).toMatchObject({ paid: 1, is_frozen: false, has_past_due_invoice_since__date: null });
    const member = await t.factories.user();
    expect((await call(t, "POST", `/billing/v1/account/${org.id}/pay`, member.token)).status).toBe(404);
  });
});
