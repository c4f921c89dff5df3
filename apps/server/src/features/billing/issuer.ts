import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * The seller on every invoice (docs/billing.md "Invoices"): the operator's legal name, address,
 * tax ID, country and tax rate, and a logo, from FLOTILLA_BILLING_ISSUER_* or a JSON file
 * (FLOTILLA_BILLING_ISSUER_FILE). Copied onto each invoice when it is issued.
 */
export type BillingIssuer = {
  name: string;
  address: string[];
  email?: string | undefined;
  tax_id?: string | undefined;
  /** ISO 3166-1 alpha-2. */
  country?: string | undefined;
  tax_rate_percent?: number | undefined;
  /** "VAT", "GST", "Sales tax"; VAT for an EU country when unset. */
  tax_name?: string | undefined;
  /** A PNG or JPEG file printed at the top of each invoice. */
  logo?: string | undefined;
};

/** The seller when nothing is configured. */
export const DEFAULT_ISSUER: BillingIssuer = { name: "Flotilla", address: [] };

const issuerSchema = z
  .object({
    name: z.string().trim().min(1, "must not be empty").max(200),
    address: z.array(z.string().trim().max(200)).max(8).default([]),
    email: z.email("must be an email address").optional(),
    tax_id: z.string().trim().min(1).max(100).optional(),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, "must be a two-letter country code (ISO 3166-1)")
      .transform((code) => code.toUpperCase())
      .optional(),
    tax_rate_percent: z.coerce.number({ error: "must be a number" }).min(0).max(100).optional(),
    tax_name: z.string().trim().min(1).max(40).optional(),
    logo: z
      .string()
      .min(1)
      .refine((file) => /\.(png|jpe?g)$/i.test(file), "must be a .png or .jpg file")
      .refine((file) => fs.existsSync(path.resolve(file)), "is not a readable file")
      .transform((file) => path.resolve(file))
      .optional(),
  })
  .strict();

const PREFIX = "FLOTILLA_BILLING_ISSUER_";

/** The issuer from the environment; an invalid value is a start-up error naming the variable. */
export function readBillingIssuer(env: Record<string, string | undefined>): BillingIssuer {
  let raw: Record<string, unknown>;
  let where: string;
  const file = env[`${PREFIX}FILE`];
  if (file) {
    where = `${PREFIX}FILE=${JSON.stringify(file)}`;
    try {
      raw = JSON.parse(fs.readFileSync(path.resolve(file), "utf8"));
    } catch (error) {
      throw new Error(`Invalid ${where}: not a readable JSON file (${(error as Error).message})`);
    }
  } else {
    where = `${PREFIX}*`;
    const value = (name: string) => env[`${PREFIX}${name}`] || undefined;
    raw = {
      name: value("NAME") ?? "Flotilla",
      address: value("ADDRESS")
        ?.split(/\n|\|/)
        .map((line) => line.trim())
        .filter(Boolean),
      email: value("EMAIL"),
      tax_id: value("TAX_ID"),
      country: value("COUNTRY"),
      tax_rate_percent: value("TAX_RATE"),
      tax_name: value("TAX_NAME"),
      logo: value("LOGO"),
    };
    for (const key of Object.keys(raw)) if (raw[key] === undefined) delete raw[key];
  }
  const parsed = issuerSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") ?? "";
    const variable = file
      ? `${where}: ${field}`
      : `${PREFIX}${field.split(".")[0]?.toUpperCase().replace("TAX_RATE_PERCENT", "TAX_RATE")}`;
    throw new Error(`Invalid ${variable}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}
