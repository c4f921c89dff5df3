import fs from "node:fs";
import { invoiceDay } from "@flotilla/domain";
import PDFDocument from "pdfkit";
import type { BillingIssuer } from "./issuer.ts";
import type { BilledTo, InvoiceRow } from "./queries.ts";

const money = (cents: number, currency: string) =>
  new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() }).format(cents / 100);
const day = (value: Date | null) => (value ? invoiceDay(new Date(value)) : "—");

const STATE_TEXT: Record<string, string> = {
  paid: "Paid",
  past_due: "Past due",
  failed: "Payment failed",
  processing: "Payment processing",
  open: "Open",
};

const GREY = "#5f6368";
const RULE = "#dadce0";

/**
 * The invoice as a PDF (spec 3 §4 "Invoice download returns a PDF"), as an accountant books it:
 * the seller (name, address, tax ID, logo) and who is billed, both as they were when it was
 * issued; its number, dates and period; one row per line; the subtotal, tax and total; how it
 * was paid; and the tax note (reverse charge). Built with pdfkit's standard fonts.
 *
 * `logo` is the seller's logo file as configured now (a path is not copied onto the invoice);
 * invoices from before the copy was kept have no `billed_to` and take `fallback`.
 */
export function invoicePdf(
  invoice: InvoiceRow,
  fallback: { billedTo: BilledTo; seller: Omit<BillingIssuer, "logo"> },
  logo?: string,
): Promise<Buffer> {
  const seller = invoice.seller ?? fallback.seller;
  const billedTo = invoice.billed_to ?? fallback.billedTo;
  const currency = invoice.currency;
  // Uncompressed: an invoice is small, and its text stays searchable by any tool.
  const doc = new PDFDocument({
    size: "A4",
    margin: 56,
    compress: false,
    // The amount in the metadata too: mail filters and accounting tools read it without parsing pages.
    info: {
      Title: `Invoice ${invoice.invoice_number}`,
      Author: seller.name,
      Subject: `Invoice ${invoice.invoice_number}: ${money(invoice.total_in_cents, currency)}, ${invoice.state}`,
    },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  const left = 56;
  const right = doc.page.width - 56;
  const width = right - left;

  // Header: the seller on the left (logo above its name), "Invoice" and its number on the right.
  const top = doc.y;
  if (logo && fs.existsSync(logo)) {
    try {
      doc.image(logo, left, top, { fit: [140, 48] });
      doc.y = top + 56;
    } catch {
      // An unreadable image is left out rather than failing the invoice.
    }
  }
  doc.font("Helvetica-Bold").fontSize(12).fillColor("#000").text(seller.name, left);
  doc.font("Helvetica").fontSize(9).fillColor(GREY);
  for (const line of seller.address) doc.text(line);
  if (seller.email) doc.text(seller.email);
  if (seller.tax_id) doc.text(`Tax ID: ${seller.tax_id}`);
  const sellerBottom = doc.y;
  doc.font("Helvetica-Bold").fontSize(22).fillColor("#000").text("Invoice", left, top, { width, align: "right" });
  doc.font("Helvetica").fontSize(9).fillColor(GREY);
  const facts: [string, string][] = [
    ["Number", invoice.invoice_number],
    ["Issued", day(invoice.created_at)],
    ["Due", day(invoice.due_on)],
    ["Status", STATE_TEXT[invoice.state] ?? invoice.state.replace("_", " ")],
  ];
  for (const [label, value] of facts) doc.text(`${label}: ${value}`, left, doc.y, { width, align: "right" });
  doc.y = Math.max(sellerBottom, doc.y) + 24;

  // Billed to.
  doc.font("Helvetica-Bold").fontSize(9).fillColor(GREY).text("BILLED TO", left);
  doc.font("Helvetica").fontSize(10).fillColor("#000");
  const address = billedTo.address ?? {};
  const billed = [
    billedTo.name,
    address.address1,
    address.address2,
    [address.zip, address.city].filter(Boolean).join(" "),
    [address.state, address.country].filter(Boolean).join(", "),
    billedTo.email,
    billedTo.tax_id ? `Tax ID: ${billedTo.tax_id.value}` : undefined,
  ].filter((line): line is string => Boolean(line));
  for (const line of billed) doc.text(line);
  if (invoice.period_start && invoice.period_end && invoice.period_end > invoice.period_start) {
    const lastDay = new Date(new Date(invoice.period_end).getTime() - 86_400_000);
    doc
      .moveDown(0.5)
      .fillColor(GREY)
      .fontSize(9)
      .text(`Service period: ${day(invoice.period_start)} – ${day(lastDay)}`);
  }
  doc.moveDown(1.5);

  // Lines.
  const columns = { description: left, quantity: left + 290, unit: left + 330, amount: left + 410 };
  const rule = () => {
    doc.moveTo(left, doc.y).lineTo(right, doc.y).strokeColor(RULE).lineWidth(0.75).stroke();
    doc.y += 6;
  };
  const row = (cells: [string, string, string, string], options: { bold?: boolean; grey?: boolean } = {}) => {
    const y = doc.y;
    doc
      .font(options.bold ? "Helvetica-Bold" : "Helvetica")
      .fontSize(options.grey ? 9 : 10)
      .fillColor(options.grey ? GREY : "#000");
    doc.text(cells[0], columns.description, y, { width: 280 });
    const end = doc.y;
    doc.text(cells[1], columns.quantity, y, { width: 30, align: "right" });
    doc.text(cells[2], columns.unit, y, { width: 75, align: "right" });
    doc.text(cells[3], columns.amount, y, { width: right - columns.amount, align: "right" });
    doc.y = Math.max(end, doc.y) + 6;
    doc.x = left;
  };
  row(["Description", "Qty", "Unit price", "Amount"], { bold: true, grey: true });
  rule();
  const isTax = (code?: string) => code === "tax";
  for (const line of invoice.lines.filter((line) => !isTax(line.code))) {
    row([
      line.description,
      String(line.quantity),
      money(line.unit_cost_in_cents, currency),
      money(line.amount_in_cents, currency),
    ]);
  }
  rule();
  const taxLines = invoice.lines.filter((line) => isTax(line.code));
  const subtotal = invoice.total_in_cents - taxLines.reduce((sum, line) => sum + line.amount_in_cents, 0);
  row(["Subtotal", "", "", money(subtotal, currency)]);
  for (const line of taxLines) row([line.description, "", "", money(line.amount_in_cents, currency)]);
  row([`Total (${currency.toUpperCase()})`, "", "", money(invoice.total_in_cents, currency)], { bold: true });
  doc.moveDown(1);

  doc.font("Helvetica").fontSize(9).fillColor(GREY);
  if (invoice.state === "paid") {
    doc.text(
      invoice.paid_with
        ? `Paid ${day(invoice.closed_at ?? invoice.created_at)} with ${invoice.paid_with}.`
        : "Nothing to pay: covered by credits and adjustments.",
      left,
    );
  } else if (invoice.paid_with) {
    doc.text(`To be paid with ${invoice.paid_with}.`, left);
  }
  if (invoice.tax_note) doc.moveDown(0.5).text(invoice.tax_note, left, doc.y, { width });
  doc.end();
  return done;
}
