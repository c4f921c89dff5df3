import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { REVERSE_CHARGE_NOTE } from "@flotilla/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtInProvider } from "../src/features/billing/provider.ts";
import { billingNow, changePlan } from "../src/features/billing/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { addTestCard } from "./support/billing.ts";
import { call } from "./support/devices.ts";

/**
 * Invoices as an accountant books them (docs/billing.md "Invoices"): the seller from
 * FLOTILLA_BILLING_ISSUER_*, who is billed as they were when it was issued, how it was paid, the
 * tax the buyer's country and tax ID call for, numbers without gaps — and a page of the PDF
 * rendered with pdftoppm, to look at.
 */
const run = promisify(execFile);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-invoices-"));

/** A small PNG (an accent-coloured bar) for the seller's logo, written without any image library. */
function writeLogo(file: string) {
  const width = 120;
  const height = 32;
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (data: Buffer) => {
    let c = 0xffffffff;
    for (const byte of data) c = (crcTable[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) rows.set([0x1a, 0x73, 0xe8], y * (width * 3 + 1) + 1 + x * 3);
  }
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
  fs.writeFileSync(file, png);
}

let t: TestApp;

beforeAll(async () => {
  const logo = path.join(work, "logo.png");
  writeLogo(logo);
  t = await createTestApp({
    FLOTILLA_BILLING_ISSUER_NAME: "Fleetworks GmbH",
    FLOTILLA_BILLING_ISSUER_ADDRESS: "Torstraße 1|10119 Berlin|Germany",
    FLOTILLA_BILLING_ISSUER_EMAIL: "billing@fleetworks.example",
    FLOTILLA_BILLING_ISSUER_TAX_ID: "DE123456789",
    FLOTILLA_BILLING_ISSUER_COUNTRY: "DE",
    FLOTILLA_BILLING_ISSUER_TAX_RATE: "19",
    FLOTILLA_BILLING_ISSUER_LOGO: logo,
  });
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

/** An organization with company details and a card. */
async function customer(details: {
  company: string;
  country: string;
  taxId?: { type: string; value: string; country?: string };
}) {
  const admin = await t.factories.user();
  const org = await t.factories.organization({ admins: [admin.user] });
  const saved = await call(t, "PATCH", `/billing/v1/account/${org.id}`, admin.token, {
    email: "accounts@example.com",
    company_name: details.company,
    address: { address1: "12 Rue de la Paix", zip: "75002", city: "Paris", country: details.country },
    tax_id: details.taxId ?? null,
  });
  expect(saved.status).toBe(200);
  expect((await addTestCard(t, org.id, admin.token)).status).toBe(200);
  return { admin, org };
}

const toPilot = async (org: number) => {
  const now = await billingNow(t.db, builtInProvider);
  return t.db.transaction((tx) =>
    changePlan(tx, builtInProvider, org, { tier: "pilot-v2", cycle: "monthly" }, now, t.ctx.config.billingIssuer),
  );
};

async function pdfOf(org: number, token: string, number: string) {
  const response = await fetch(`${t.url}/billing/v1/account/${org}/invoices/${number}/download`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  const file = path.join(work, `${number}-${Date.now()}.pdf`);
  fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
  const { stdout } = await run("pdftotext", ["-layout", file, "-"]);
  return { file, text: stdout };
}

describe("invoices", () => {
  it("bill an EU business in another member state with the seller, the reverse charge and how it was paid", async () => {
    const { admin, org } = await customer({
      company: "Acme Robotique SAS",
      country: "FR",
      taxId: { type: "eu_vat", value: "FR12345678901", country: "FR" },
    });
    const invoice = await toPilot(org.id);
    expect(invoice).toMatchObject({ total_in_cents: 29900, state: "paid" });
    const { text, file } = await pdfOf(org.id, admin.token, invoice?.invoice_number ?? "");
    for (const expected of [
      "Fleetworks GmbH",
      "Torstraße 1",
      "Tax ID: DE123456789",
      "Acme Robotique SAS",
      "Tax ID: FR12345678901",
      invoice?.invoice_number ?? "",
      "Pilot plan, monthly",
      "VAT 0%",
      "Visa ending in 4242 (a test payment: no money moved)",
    ]) {
      expect(text).toContain(expected);
    }
    expect(text.replace(/\s+/g, " ")).toContain(REVERSE_CHARGE_NOTE);
    // A page as a person sees it (docs: looked at when this test was written).
    await run("pdftoppm", ["-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile", file, path.join(work, "page")]);
    const page = fs.readFileSync(path.join(work, "page.png"));
    expect(page.subarray(1, 4).toString()).toBe("PNG");
    if (process.env.FLOTILLA_KEEP_INVOICE_PNG)
      fs.copyFileSync(path.join(work, "page.png"), process.env.FLOTILLA_KEEP_INVOICE_PNG);
  });

  it("charge the seller's VAT to a buyer in its own country", async () => {
    const { admin, org } = await customer({ company: "Berlin Devices GmbH", country: "DE" });
    const invoice = await toPilot(org.id);
    expect(invoice?.total_in_cents).toBe(29900 + 5681);
    expect(invoice?.lines.at(-1)).toMatchObject({ code: "tax", description: "VAT 19%", amount_in_cents: 5681 });
    const { text } = await pdfOf(org.id, admin.token, invoice?.invoice_number ?? "");
    expect(text).toMatch(/Subtotal\s+\$299\.00/);
    expect(text).toMatch(/Total \(USD\)\s+\$355\.81/);
  });

  it("never change once issued: renaming the company changes only future invoices", async () => {
    const { admin, org } = await customer({ company: "Old Name Ltd", country: "FR" });
    const invoice = await toPilot(org.id);
    await call(t, "PATCH", `/billing/v1/account/${org.id}`, admin.token, { company_name: "New Name Ltd" });
    const { text } = await pdfOf(org.id, admin.token, invoice?.invoice_number ?? "");
    expect(text).toContain("Old Name Ltd");
    expect(text).not.toContain("New Name Ltd");
  });

  it("are numbered in sequence without gaps, also when a period was invoiced already", async () => {
    const first = await customer({ company: "One", country: "FR" });
    const second = await customer({ company: "Two", country: "FR" });
    const a = await toPilot(first.org.id);
    // Issuing the same period twice takes no number.
    const { rows } = await t.db.query<{ period_start: Date }>(
      `SELECT period_start FROM "invoice" WHERE organization = $1`,
      [first.org.id],
    );
    const again = await t.db.transaction(async (tx) => {
      const { createInvoice } = await import("../src/features/billing/queries.ts");
      return createInvoice(tx, first.org.id, {
        state: "paid",
        lines: [],
        periodStart: rows[0]?.period_start as Date,
        periodEnd: new Date(),
        dueOn: new Date(),
        issuedAt: new Date(),
        seller: t.ctx.config.billingIssuer,
        paidWith: null,
        taxNote: undefined,
      });
    });
    expect(again).toBeUndefined();
    const b = await toPilot(second.org.id);
    const number = (invoice: typeof a) => Number(invoice?.invoice_number.slice("INV-".length));
    expect(number(b)).toBe(number(a) + 1);
    const { rows: all } = await t.db.query<{ invoice_number: string }>(
      `SELECT invoice_number FROM "invoice" ORDER BY invoice_number`,
    );
    const numbers = all.map((row) => Number(row.invoice_number.slice(4)));
    expect(numbers).toEqual(numbers.map((_, index) => index + 1));
  });

  it("are dated by billing time: the test clock's day", async () => {
    const { admin, org } = await customer({ company: "Clockwork", country: "FR" });
    await t.db.query(
      `INSERT INTO "billing_test_clock" (id, advanced_by_seconds) VALUES (1, 40 * 86400)
       ON CONFLICT (id) DO UPDATE SET advanced_by_seconds = 40 * 86400`,
    );
    try {
      const invoice = await toPilot(org.id);
      const issued = new Date(invoice?.created_at ?? 0).getTime();
      expect(Math.abs(issued - (Date.now() + 40 * 86_400_000))).toBeLessThan(60_000);
      const list = await call(t, "GET", `/billing/v1/account/${org.id}/invoices`, admin.token);
      expect(new Date((list.json as unknown as Array<{ created_at: string }>)[0]?.created_at ?? 0).getTime()).toBe(
        issued,
      );
    } finally {
      await t.db.query(`UPDATE "billing_test_clock" SET advanced_by_seconds = 0`);
    }
  });
});
