import PDFDocument from "pdfkit";
import type { AccountRow, InvoiceRow } from "./queries.ts";

const money = (cents: number, currency: string) =>
  new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() }).format(cents / 100);
const day = (value: Date | null) => (value ? new Date(value).toISOString().slice(0, 10) : "—");

/**
 * The invoice as a PDF (spec 3 §4 "Invoice download returns a PDF"): who is billed (company
 * info, address, tax ID), the period, one row per line and the total. Built with pdfkit's
 * standard fonts, so nothing is read from disk.
 */
export function invoicePdf(invoice: InvoiceRow, account: AccountRow, organizationName: string): Promise<Buffer> {
  // Uncompressed: an invoice is small, and its text stays searchable by any tool.
  const doc = new PDFDocument({
    size: "A4",
    margin: 56,
    compress: false,
    // The amount in the metadata too: mail filters and accounting tools read it without parsing pages.
    info: {
      Title: `Invoice ${invoice.invoice_number}`,
      Subject: `Invoice ${invoice.invoice_number}: ${money(invoice.total_in_cents, invoice.currency)}, ${invoice.state}`,
    },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });

  doc.font("Helvetica-Bold").fontSize(20).text("Invoice", { continued: false });
  doc.font("Helvetica").fontSize(10).fillColor("#555");
  doc.text(`Number ${invoice.invoice_number}`);
  doc.text(`Issued ${day(invoice.created_at)} · Due ${day(invoice.due_on)} · ${invoice.state.replace("_", " ")}`);
  doc.text(`Period ${day(invoice.period_start)} to ${day(invoice.period_end)}`);
  doc.moveDown();

  doc.fillColor("#000").font("Helvetica-Bold").text("Billed to");
  doc.font("Helvetica");
  const address = account.address;
  const lines = [
    account.company_name || organizationName,
    address.address1,
    address.address2,
    [address.zip, address.city].filter(Boolean).join(" "),
    [address.state, address.country].filter(Boolean).join(", "),
    account.email,
    account.tax_id ? `Tax ID (${account.tax_id.type}): ${account.tax_id.value}` : undefined,
  ].filter((line): line is string => Boolean(line));
  for (const line of lines) doc.text(line);
  doc.moveDown(1.5);

  const columns = { description: 56, quantity: 340, unit: 400, amount: 480 };
  const row = (cells: [string, string, string, string], bold = false) => {
    const y = doc.y;
    doc.font(bold ? "Helvetica-Bold" : "Helvetica");
    doc.text(cells[0], columns.description, y, { width: 270 });
    const end = doc.y;
    doc.text(cells[1], columns.quantity, y, { width: 50, align: "right" });
    doc.text(cells[2], columns.unit, y, { width: 70, align: "right" });
    doc.text(cells[3], columns.amount, y, { width: 60, align: "right" });
    doc.y = Math.max(end, doc.y) + 6;
    doc.x = columns.description;
  };
  row(["Description", "Qty", "Unit", "Amount"], true);
  for (const line of invoice.lines) {
    row([
      line.description,
      String(line.quantity),
      money(line.unit_cost_in_cents, invoice.currency),
      money(line.amount_in_cents, invoice.currency),
    ]);
  }
  doc.moveDown();
  row(["Total", "", "", money(invoice.total_in_cents, invoice.currency)], true);
  doc.end();
  return done;
}
