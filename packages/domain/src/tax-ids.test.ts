import { describe, expect, it } from "vitest";
import {
  INVALID_TAX_ID,
  normaliseTaxId,
  TAX_ID_TYPE_CODES,
  TAX_ID_TYPES,
  taxIdTypeRows,
  validateTaxId,
} from "./index.ts";

const EU_MEMBERS = "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE".split(" ");

describe("tax ID type table (spec 3 §3)", () => {
  it("has about 130 country-specific rows, each with a label, an example, a pattern and a country", () => {
    expect(TAX_ID_TYPES.length).toBeGreaterThanOrEqual(125);
    expect(TAX_ID_TYPES.length).toBeLessThanOrEqual(140);
    for (const entry of TAX_ID_TYPES) {
      expect(entry.type).toMatch(/^[a-z]{2}_[a-z_]+$/);
      expect(entry.label).not.toBe("");
      expect(entry.description).not.toBe("");
      expect(entry.country).toMatch(/^[A-Z]{2}$/);
      expect(entry.pattern.source.startsWith("^") && entry.pattern.source.endsWith("$")).toBe(true);
    }
  });

  it("accepts every row's own example", () => {
    for (const { type, country, description } of TAX_ID_TYPES) {
      expect(validateTaxId({ type, value: description, country }), `${type} ${country}`).toBeUndefined();
    }
  });

  it("has one eu_vat row per EU member state, plus Northern Ireland under GB", () => {
    const euVat = TAX_ID_TYPES.filter((entry) => entry.type === "eu_vat").map((entry) => entry.country);
    expect([...euVat].sort()).toEqual([...EU_MEMBERS, "GB"].sort());
    expect(taxIdTypeRows("eu_vat", "gb")[0]?.label).toBe("Northern Ireland VAT Number");
  });

  it("lists each type code once, other types having a single row", () => {
    expect(new Set(TAX_ID_TYPE_CODES).size).toBe(TAX_ID_TYPE_CODES.length);
    expect(TAX_ID_TYPE_CODES).toContain("eu_vat");
    for (const code of TAX_ID_TYPE_CODES.filter((code) => code !== "eu_vat")) {
      expect(taxIdTypeRows(code), code).toHaveLength(1);
    }
  });
});

describe("validateTaxId (spec 3 §5)", () => {
  it("us_ein is 2 digits, a dash and 7 digits", () => {
    expect(validateTaxId({ type: "us_ein", value: "12-3456789" })).toBeUndefined();
    for (const value of ["123456789", "12-345678", "12-34567890", "1-23456789", "AB-3456789", "12 3456789"]) {
      expect(validateTaxId({ type: "us_ein", value }), value).toBe(INVALID_TAX_ID);
    }
  });

  it("gb_vat is GB and 9 digits", () => {
    expect(validateTaxId({ type: "gb_vat", value: "GB123456789" })).toBeUndefined();
    expect(validateTaxId({ type: "gb_vat", value: "gb123456789" })).toBeUndefined();
    for (const value of ["123456789", "GB12345678", "GB1234567890", "XI123456789", "DE123456789"]) {
      expect(validateTaxId({ type: "gb_vat", value }), value).toBe("fields_errors.invalid_tax_id");
    }
  });

  it.each([
    ["AT", "ATU12345678", "AT12345678"],
    ["BE", "BE0123456789", "BE2123456789"],
    ["DE", "DE123456789", "DE12345678"],
    ["GR", "EL123456789", "GR123456789"],
    ["FR", "FRAB123456789", "FRIO123456789"],
    ["IE", "IE1234567WA", "IE12345678"],
    ["NL", "NL123456789B12", "NL123456789012"],
    ["ES", "ESA1234567Z", "ES12345678"],
    ["SE", "SE123456789123", "SE1234567891"],
    ["GB", "XI123456789", "GB123456789"],
  ])("eu_vat in %s accepts %s and refuses %s", (country, good, bad) => {
    expect(validateTaxId({ type: "eu_vat", value: good, country })).toBeUndefined();
    expect(validateTaxId({ type: "eu_vat", value: bad, country })).toBe(INVALID_TAX_ID);
  });

  it("checks eu_vat against its country's row, or any EU row when no country is given", () => {
    expect(validateTaxId({ type: "eu_vat", value: "DE123456789", country: "FR" })).toBe(INVALID_TAX_ID);
    expect(validateTaxId({ type: "eu_vat", value: "DE123456789", country: "de" })).toBeUndefined();
    expect(validateTaxId({ type: "eu_vat", value: "DE123456789" })).toBeUndefined();
    expect(validateTaxId({ type: "eu_vat", value: "DE123456789", country: "US" })).toBe(INVALID_TAX_ID);
  });

  it.each([
    ["au_abn", "12 345 678 912", "1234567891"],
    ["br_cnpj", "01.234.456/5432-10", "01.234.456-5432-10"],
    ["br_cpf", "12345678987", "123.456.789.87"],
    ["ca_gst_hst", "123456789RT0002", "123456789RP0002"],
    ["ca_qst", "1234567890TQ1234", "1234567890TQ123"],
    ["ch_vat", "CHE-123.456.789 MWST", "CHE-123.456.789"],
    ["in_gst", "12ABCDE3456FGZH", "12ABCDE3456FGXH"],
    ["jp_trn", "T1234567891234", "1234567891234"],
    ["mx_rfc", "ABC010203AB9", "AB010203AB9"],
    ["no_vat", "123456789MVA", "123456789"],
    ["za_vat", "4123456789", "5123456789"],
    ["kr_brn", "123-45-67890", "123-456-7890"],
    ["sg_uen", "T08LL1234A", "T08LL1234"],
    ["ru_inn", "123456789012", "12345678901"],
  ])("%s accepts %s and refuses %s", (type, good, bad) => {
    expect(validateTaxId({ type, value: good })).toBeUndefined();
    expect(validateTaxId({ type, value: bad })).toBe(INVALID_TAX_ID);
  });

  it("ignores surrounding spaces and refuses an unknown type", () => {
    expect(validateTaxId({ type: "us_ein", value: "  12-3456789 " })).toBeUndefined();
    expect(validateTaxId({ type: "xx_vat", value: "123" })).toBe(INVALID_TAX_ID);
  });

  it("does not refuse an empty tax ID, which is sent as null", () => {
    expect(validateTaxId({ type: "", value: "" })).toBeUndefined();
    expect(validateTaxId({ type: "us_ein", value: "   " })).toBeUndefined();
    expect(validateTaxId(null)).toBeUndefined();
  });
});

describe("normaliseTaxId (spec 3 §5)", () => {
  it("is null when the type or the value is empty", () => {
    expect(normaliseTaxId(null)).toBeNull();
    expect(normaliseTaxId(undefined)).toBeNull();
    expect(normaliseTaxId({ type: "", value: "12-3456789" })).toBeNull();
    expect(normaliseTaxId({ type: "us_ein", value: "" })).toBeNull();
    expect(normaliseTaxId({ type: "us_ein", value: "  " })).toBeNull();
    expect(normaliseTaxId({ type: "us_ein" })).toBeNull();
  });

  it("trims and upper-cases the value, and keeps a country only for eu_vat", () => {
    expect(normaliseTaxId({ type: "gb_vat", value: " gb123456789 ", country: "GB" })).toEqual({
      type: "gb_vat",
      value: "GB123456789",
    });
    expect(normaliseTaxId({ type: "eu_vat", value: "de123456789", country: "de" })).toEqual({
      type: "eu_vat",
      value: "DE123456789",
      country: "DE",
    });
    expect(normaliseTaxId({ type: "eu_vat", value: "DE123456789", country: "" })).toEqual({
      type: "eu_vat",
      value: "DE123456789",
    });
  });
});
