/**
 * Tax IDs of the billing account (spec 3 §3 "Tax ID type table", §5 "Company info"). The table is
 * the customer tax ID types Stripe supports (its documented list: type, description, example),
 * one row per country; eu_vat has a row per EU member state plus Northern Ireland (XI prefix,
 * country GB). The dashboard's picker lists it, and the server refuses what the picker would.
 *
 * Patterns follow each type's documented example. Where the official format has a few known
 * shapes (with or without separators, two lengths), the pattern accepts those shapes and no more.
 * The spec fixes two exactly: us_ein is 2 digits, a dash and 7 digits; gb_vat is GB and 9 digits.
 */

export interface TaxIdType {
  /** Stripe's type code, e.g. "us_ein". Not unique: eu_vat has one row per country. */
  type: string;
  /** What the picker shows, e.g. "United States EIN". */
  label: string;
  /** An example value, shown as the field's hint, e.g. "12-3456789". */
  description: string;
  /** Matches a whole (trimmed, upper-cased) value. */
  pattern: RegExp;
  /** ISO 3166-1 alpha-2 country the type belongs to ("EU" for the One Stop Shop scheme). */
  country: string;
}

/** The tax ID as the billing account holds it (spec 3 §3): country only for EU VAT. */
export interface TaxId {
  type: string;
  value: string;
  country?: string | null;
}

export const INVALID_TAX_ID = "fields_errors.invalid_tax_id";

const row = (type: string, country: string, label: string, description: string, pattern: RegExp): TaxIdType => ({
  type,
  label,
  description,
  pattern,
  country,
});

/** EU VAT numbers: the country prefix then the national format (Greece uses EL, Northern Ireland XI). */
const EU_VAT: readonly [country: string, name: string, example: string, pattern: RegExp][] = [
  ["AT", "Austria", "ATU12345678", /^ATU\d{8}$/],
  ["BE", "Belgium", "BE0123456789", /^BE[01]\d{9}$/],
  ["BG", "Bulgaria", "BG0123456789", /^BG\d{9,10}$/],
  ["HR", "Croatia", "HR12345678912", /^HR\d{11}$/],
  ["CY", "Cyprus", "CY12345678Z", /^CY\d{8}[A-Z]$/],
  ["CZ", "Czech Republic", "CZ1234567890", /^CZ\d{8,10}$/],
  ["DK", "Denmark", "DK12345678", /^DK\d{8}$/],
  ["EE", "Estonia", "EE123456789", /^EE\d{9}$/],
  ["FI", "Finland", "FI12345678", /^FI\d{8}$/],
  ["FR", "France", "FRAB123456789", /^FR[0-9A-HJ-NP-Z]{2}\d{9}$/],
  ["DE", "Germany", "DE123456789", /^DE\d{9}$/],
  ["GR", "Greece", "EL123456789", /^EL\d{9}$/],
  ["HU", "Hungary", "HU12345678", /^HU\d{8}$/],
  ["IE", "Ireland", "IE1234567AB", /^IE(\d{7}[A-W][A-IW]?|\d[A-Z+*]\d{5}[A-W])$/],
  ["IT", "Italy", "IT12345678912", /^IT\d{11}$/],
  ["LV", "Latvia", "LV12345678912", /^LV\d{11}$/],
  ["LT", "Lithuania", "LT123456789123", /^LT(\d{9}|\d{12})$/],
  ["LU", "Luxembourg", "LU12345678", /^LU\d{8}$/],
  ["MT", "Malta", "MT12345678", /^MT\d{8}$/],
  ["NL", "Netherlands", "NL123456789B12", /^NL\d{9}B\d{2}$/],
  ["PL", "Poland", "PL1234567890", /^PL\d{10}$/],
  ["PT", "Portugal", "PT123456789", /^PT\d{9}$/],
  ["RO", "Romania", "RO1234567891", /^RO\d{2,10}$/],
  ["SK", "Slovakia", "SK1234567891", /^SK\d{10}$/],
  ["SI", "Slovenia", "SI12345678", /^SI\d{8}$/],
  ["ES", "Spain", "ESA1234567Z", /^ES[A-Z0-9]\d{7}[A-Z0-9]$/],
  ["SE", "Sweden", "SE123456789123", /^SE\d{12}$/],
];

/** Every tax ID type, ordered by country code then type. */
export const TAX_ID_TYPES: readonly TaxIdType[] = [
  row("ad_nrt", "AD", "Andorran NRT Number", "A-123456-Z", /^[A-Z]-?\d{6}-?[A-Z]$/),
  row("ae_trn", "AE", "United Arab Emirates TRN", "123456789012345", /^\d{15}$/),
  row("al_tin", "AL", "Albania Tax Identification Number", "J12345678N", /^[A-Z]\d{8}[A-Z]$/),
  row("am_tin", "AM", "Armenia Tax Identification Number", "02538904", /^\d{8}$/),
  row("ao_tin", "AO", "Angola Tax Identification Number", "5123456789", /^(\d{10}|\d{9}[A-Z]{2}\d{3})$/),
  row("ar_cuit", "AR", "Argentinian Tax ID Number", "12-3456789-01", /^(\d{2}-\d{7}-\d{2}|\d{2}-\d{8}-\d|\d{11})$/),
  row("au_abn", "AU", "Australian Business Number (AU ABN)", "12345678912", /^\d{2} ?\d{3} ?\d{3} ?\d{3}$/),
  row("au_arn", "AU", "Australian Taxation Office Reference Number", "123456789123", /^\d{12}$/),
  row("aw_tin", "AW", "Aruba Tax Identification Number", "12345678", /^\d{8}$/),
  row("az_tin", "AZ", "Azerbaijan Tax Identification Number", "0123456789", /^\d{10}$/),
  row("ba_tin", "BA", "Bosnia and Herzegovina Tax Identification Number", "123456789012", /^\d{12}$/),
  row("bb_tin", "BB", "Barbados Tax Identification Number", "1123456789012", /^\d{13}$/),
  row("bd_bin", "BD", "Bangladesh Business Identification Number", "123456789-0123", /^\d{9}-?\d{4}$/),
  row(
    "bf_ifu",
    "BF",
    "Burkina Faso Tax Identification Number (Numéro d'Identifiant Fiscal Unique)",
    "12345678A",
    /^\d{8}[A-Z]$/,
  ),
  row("bg_uic", "BG", "Bulgaria Unified Identification Code", "123456789", /^(\d{9}|\d{13})$/),
  row("bh_vat", "BH", "Bahraini VAT Number", "123456789012345", /^\d{15}$/),
  row("bj_ifu", "BJ", "Benin Tax Identification Number (Identifiant Fiscal Unique)", "1234567890123", /^\d{13}$/),
  row("bo_tin", "BO", "Bolivian Tax ID", "123456789", /^\d{7,12}$/),
  row("br_cnpj", "BR", "Brazilian CNPJ Number", "01.234.456/5432-10", /^(\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}|\d{14})$/),
  row("br_cpf", "BR", "Brazilian CPF Number", "123.456.789-87", /^(\d{3}\.\d{3}\.\d{3}-\d{2}|\d{11})$/),
  row("bs_tin", "BS", "Bahamas Tax Identification Number", "123.456.789", /^\d{3}\.?\d{3}\.?\d{3}$/),
  row("by_tin", "BY", "Belarus TIN Number", "123456789", /^\d{9}$/),
  row("ca_bn", "CA", "Canadian BN", "123456789", /^\d{9}$/),
  row("ca_gst_hst", "CA", "Canadian GST/HST Number", "123456789RT0002", /^\d{9}RT\d{4}$/),
  row("ca_pst_bc", "CA", "Canadian PST Number (British Columbia)", "PST-1234-5678", /^PST-\d{4}-\d{4}$/),
  row("ca_pst_mb", "CA", "Canadian PST Number (Manitoba)", "123456-7", /^\d{6}-\d$/),
  row("ca_pst_sk", "CA", "Canadian PST Number (Saskatchewan)", "1234567", /^\d{7}$/),
  row("ca_qst", "CA", "Canadian QST Number (Québec)", "1234567890TQ1234", /^\d{10}TQ\d{4}$/),
  row(
    "cd_nif",
    "CD",
    "Congo (DR) Tax Identification Number (Número de Identificação Fiscal)",
    "A0123456M",
    /^[A-Z]\d{7}[A-Z]$/,
  ),
  row("ch_uid", "CH", "Switzerland UID Number", "CHE-123.456.789 HR", /^CHE-?\d{3}\.?\d{3}\.?\d{3} ?HR$/),
  row("ch_vat", "CH", "Switzerland VAT Number", "CHE-123.456.789 MWST", /^CHE-?\d{3}\.?\d{3}\.?\d{3} ?(MWST|TVA|IVA)$/),
  row("cl_tin", "CL", "Chilean TIN", "12.345.678-K", /^\d{1,2}\.?\d{3}\.?\d{3}-?[\dK]$/),
  row(
    "cm_niu",
    "CM",
    "Cameroon Tax Identification Number (Numéro d'Identifiant fiscal Unique)",
    "M123456789000L",
    /^[A-Z]\d{12}[A-Z]$/,
  ),
  row("cn_tin", "CN", "Chinese Tax ID", "123456789012345678", /^([0-9A-Z]{18}|\d{15})$/),
  row("co_nit", "CO", "Colombian NIT Number", "123.456.789-0", /^\d{3}\.?\d{3}\.?\d{3}-?\d$/),
  row("cr_tin", "CR", "Costa Rican Tax ID", "1-234-567890", /^\d-?\d{3}-?\d{6}$/),
  row("cv_nif", "CV", "Cape Verde Tax Identification Number (Número de Identificação Fiscal)", "213456789", /^\d{9}$/),
  row("de_stn", "DE", "German Tax Number (Steuernummer)", "1234567890", /^(\d{10,11}|\d{2,3}\/\d{3,4}\/\d{4,5})$/),
  row("do_rcn", "DO", "Dominican RCN Number", "123-4567890-1", /^(\d{3}-?\d{7}-?\d|\d{9})$/),
  row("ec_ruc", "EC", "Ecuadorian RUC Number", "1234567890001", /^\d{13}$/),
  row("eg_tin", "EG", "Egyptian Tax Identification Number", "123456789", /^\d{9}$/),
  row(
    "es_cif",
    "ES",
    "Spanish NIF Number (previously Spanish CIF Number)",
    "A12345678",
    /^([A-Z]\d{7}[A-Z0-9]|\d{8}[A-Z])$/,
  ),
  row("et_tin", "ET", "Ethiopia Tax Identification Number", "1234567890", /^\d{10}$/),
  row("eu_oss_vat", "EU", "European One Stop Shop VAT Number for non-Union scheme", "EU123456789", /^EU\d{9}$/),
  ...EU_VAT.map(([country, name, example, pattern]) =>
    row("eu_vat", country, `European VAT Number (${name})`, example, pattern),
  ),
  row("eu_vat", "GB", "Northern Ireland VAT Number", "XI123456789", /^XI(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/),
  row("gb_vat", "GB", "United Kingdom VAT Number", "GB123456789", /^GB\d{9}$/),
  row("ge_vat", "GE", "Georgian VAT", "123456789", /^\d{9}$/),
  row("gn_nif", "GN", "Guinea Tax Identification Number (Número de Identificação Fiscal)", "123456789", /^\d{9}$/),
  row("hk_br", "HK", "Hong Kong BR Number", "12345678", /^\d{8}$/),
  row("hr_oib", "HR", "Croatian Personal Identification Number (OIB)", "12345678901", /^\d{11}$/),
  row("hu_tin", "HU", "Hungary Tax Number (adószám)", "12345678-1-23", /^\d{8}-\d-\d{2}$/),
  row(
    "id_npwp",
    "ID",
    "Indonesian NPWP Number",
    "012.345.678.9-012.345",
    /^(\d{2,3}\.?\d{3}\.?\d{3}\.?\d-?\d{3}\.?\d{3}(\d{3})?|\d{16})$/,
  ),
  row("il_vat", "IL", "Israel VAT", "000012345", /^\d{9}$/),
  row("in_gst", "IN", "Indian GST Number", "12ABCDE3456FGZH", /^\d{2}[A-Z]{5}\d{4}[A-Z][0-9A-Z]Z[0-9A-Z]$/),
  row("is_vat", "IS", "Icelandic VAT", "123456", /^\d{5,6}$/),
  row("jp_cn", "JP", "Japanese Corporate Number (Hōjin Bangō)", "1234567891234", /^\d{13}$/),
  row(
    "jp_rn",
    "JP",
    "Japanese Registered Foreign Businesses' Registration Number (Tōroku Kokugai Jigyōsha no Tōroku Bangō)",
    "12345",
    /^\d{5}$/,
  ),
  row("jp_trn", "JP", "Japanese Tax Registration Number (Tōroku Bangō)", "T1234567891234", /^T\d{13}$/),
  row("ke_pin", "KE", "Kenya Revenue Authority Personal Identification Number", "P000111111A", /^[AP]\d{9}[A-Z]$/),
  row("kg_tin", "KG", "Kyrgyzstan Tax Identification Number", "12345678901234", /^\d{14}$/),
  row("kh_tin", "KH", "Cambodia Tax Identification Number", "1001-123456789", /^[0-9A-Z]\d{3}-?\d{9}$/),
  row("kr_brn", "KR", "Korean BRN", "123-45-67890", /^\d{3}-?\d{2}-?\d{5}$/),
  row("kz_bin", "KZ", "Kazakhstani Business Identification Number", "123456789012", /^\d{12}$/),
  row("la_tin", "LA", "Laos Tax Identification Number", "123456789-000", /^\d{9}-?\d{3}$/),
  row("li_uid", "LI", "Liechtensteinian UID Number", "CHE123456789", /^CHE\d{9}$/),
  row("li_vat", "LI", "Liechtenstein VAT Number", "12345", /^\d{5}$/),
  row("ma_vat", "MA", "Morocco VAT Number", "12345678", /^\d{8}$/),
  row("md_vat", "MD", "Moldova VAT Number", "1234567", /^\d{7}$/),
  row("me_pib", "ME", "Montenegro PIB Number", "12345678", /^\d{8}$/),
  row("mk_vat", "MK", "North Macedonia VAT Number", "MK1234567890123", /^MK\d{13}$/),
  row("mr_nif", "MR", "Mauritania Tax Identification Number (Número de Identificação Fiscal)", "12345678", /^\d{8}$/),
  row("mx_rfc", "MX", "Mexican RFC Number", "ABC010203AB9", /^[A-ZÑ&]{3,4}\d{6}[A-Z0-9]{3}$/),
  row("my_frp", "MY", "Malaysian FRP Number", "12345678", /^\d{8}$/),
  row("my_itn", "MY", "Malaysian ITN", "C 1234567890", /^[A-Z]{1,2} ?\d{9,11}$/),
  row("my_sst", "MY", "Malaysian SST Number", "A12-3456-78912345", /^[A-Z]\d{2}-\d{4}-\d{8}$/),
  row("ng_tin", "NG", "Nigerian Tax Identification Number", "12345678-0001", /^\d{8}-?\d{4}$/),
  row("no_vat", "NO", "Norwegian VAT Number", "123456789MVA", /^\d{9}MVA$/),
  row("no_voec", "NO", "Norwegian VAT on e-commerce Number", "1234567", /^\d{7}$/),
  row("np_pan", "NP", "Nepal PAN Number", "123456789", /^\d{9}$/),
  row("nz_gst", "NZ", "New Zealand GST Number", "123456789", /^\d{2,3}-?\d{3}-?\d{3}$/),
  row("om_vat", "OM", "Omani VAT Number", "OM1234567890", /^OM\d{10}$/),
  row("pe_ruc", "PE", "Peruvian RUC Number", "12345678901", /^\d{11}$/),
  row("ph_tin", "PH", "Philippines Tax Identification Number", "123456789012", /^\d{3}-?\d{3}-?\d{3}(-?\d{3})?$/),
  row("ro_tin", "RO", "Romanian Tax ID Number", "1234567890123", /^\d{13}$/),
  row("rs_pib", "RS", "Serbian PIB Number", "123456789", /^\d{9}$/),
  row("ru_inn", "RU", "Russian INN", "1234567891", /^(\d{10}|\d{12})$/),
  row("ru_kpp", "RU", "Russian KPP", "123456789", /^\d{9}$/),
  row("sa_vat", "SA", "Saudi Arabia VAT", "123456789012345", /^\d{15}$/),
  row("sg_gst", "SG", "Singaporean GST", "M12345678X", /^([A-Z]\d{8}[A-Z]|\d{9}[A-Z])$/),
  row("sg_uen", "SG", "Singaporean UEN", "123456789F", /^(\d{8,9}[A-Z]|[STR]\d{2}[A-Z]{2}\d{4}[A-Z])$/),
  row("si_tin", "SI", "Slovenia Tax Number (davčna številka)", "12345678", /^\d{8}$/),
  row("sn_ninea", "SN", "Senegal NINEA Number", "12345672A2", /^\d{7,9} ?[0-9A-Z]{3}$/),
  row("sr_fin", "SR", "Suriname FIN Number", "1234567890", /^\d{10}$/),
  row("sv_nit", "SV", "El Salvadorian NIT Number", "1234-567890-123-4", /^\d{4}-?\d{6}-?\d{3}-?\d$/),
  row("th_vat", "TH", "Thai VAT", "1234567891234", /^\d{13}$/),
  row("tj_tin", "TJ", "Tajikistan Tax Identification Number", "123456789", /^\d{9}$/),
  row("tr_tin", "TR", "Turkish Tax Identification Number", "0123456789", /^\d{10}$/),
  row("tw_vat", "TW", "Taiwanese VAT", "12345678", /^\d{8}$/),
  row("tz_vat", "TZ", "Tanzania VAT Number", "12345678A", /^\d{8}[A-Z]$/),
  row("ua_vat", "UA", "Ukrainian VAT", "123456789", /^(\d{9}|\d{10}|\d{12})$/),
  row("ug_tin", "UG", "Uganda Tax Identification Number", "1014751879", /^\d{10}$/),
  row("us_ein", "US", "United States EIN", "12-3456789", /^\d{2}-\d{7}$/),
  row("uy_ruc", "UY", "Uruguayan RUC Number", "123456789012", /^\d{12}$/),
  row("uz_tin", "UZ", "Uzbekistan TIN Number", "123456789", /^\d{9}$/),
  row("uz_vat", "UZ", "Uzbekistan VAT Number", "123456789012", /^\d{12}$/),
  row("ve_rif", "VE", "Venezuelan RIF Number", "A-12345678-9", /^[A-Z]-?\d{8}-?\d$/),
  row("vn_tin", "VN", "Vietnamese Tax ID Number", "1234567890", /^\d{10}(-?\d{3})?$/),
  row("za_vat", "ZA", "South African VAT Number", "4123456789", /^4\d{9}$/),
  row("zm_tin", "ZM", "Zambia Tax Identification Number", "1004751879", /^\d{10}$/),
  row("zw_tin", "ZW", "Zimbabwe Tax Identification Number", "1234567890", /^\d{10}$/),
];

/** The distinct type codes, for schemas (eu_vat once). */
export const TAX_ID_TYPE_CODES: readonly string[] = [...new Set(TAX_ID_TYPES.map((entry) => entry.type))];

/** The rows a value is checked against: eu_vat narrows to its country when one is given; other types have one row. */
export function taxIdTypeRows(type: string, country?: string | null): TaxIdType[] {
  const rows = TAX_ID_TYPES.filter((entry) => entry.type === type);
  if (type !== "eu_vat" || !country) return rows;
  return rows.filter((entry) => entry.country === country.toUpperCase());
}

const isBlank = (text: string | null | undefined) => !text?.trim();

/**
 * The tax ID to store, or null when type or value is empty (spec 3 §5: then it is sent as null).
 * The value is trimmed and upper-cased, so what is validated is what is stored.
 */
export function normaliseTaxId(taxId: Partial<TaxId> | null | undefined): TaxId | null {
  if (!taxId || isBlank(taxId.type) || isBlank(taxId.value)) return null;
  const normalised: TaxId = {
    type: (taxId.type as string).trim(),
    value: (taxId.value as string).trim().toUpperCase(),
  };
  if (normalised.type === "eu_vat" && !isBlank(taxId.country)) {
    normalised.country = (taxId.country as string).trim().toUpperCase();
  }
  return normalised;
}

/**
 * undefined when the tax ID is fine or empty (an empty tax ID is sent as null, not refused);
 * otherwise `fields_errors.invalid_tax_id` (spec 3 §5): an unknown type, an eu_vat country
 * that is not in the table, or a value no row of the type matches.
 */
export function validateTaxId(taxId: Partial<TaxId> | null | undefined): typeof INVALID_TAX_ID | undefined {
  const normalised = normaliseTaxId(taxId);
  if (!normalised) return undefined;
  const rows = taxIdTypeRows(normalised.type, normalised.country);
  return rows.some((entry) => entry.pattern.test(normalised.value)) ? undefined : INVALID_TAX_ID;
}
