/**
 * Enterprise identity providers (spec 1 §5, §9; spec 3 §5): the rules the add/edit dialog and
 * the server both apply, so what the form accepts is what the data API stores.
 */

/** Minimum length of an SSO identifier (spec 1 §9). */
export const SSO_IDENTIFIER_MIN_LENGTH = 3;
/** An SSO identifier: lowercase letters, digits, underscore and hyphen. */
export const SSO_IDENTIFIER_PATTERN = /^[a-z0-9_-]+$/;
/** The largest IdP metadata file accepted (spec 1 §9). */
export const SAML_METADATA_MAX_BYTES = 1_000_000;
/** Line length of a stored PEM certificate (spec 1 §9). */
export const PEM_LINE_LENGTH = 64;
/** The plan feature that lets an organization use SAML (spec 1 §6.2; spec 3 §6). */
export const SAML_PLAN_FEATURE = "saml";

const BEGIN = "-----BEGIN CERTIFICATE-----";
const END = "-----END CERTIFICATE-----";

/** Why an SSO identifier is refused, in the spec's words, or undefined when it is fine. */
export function ssoIdentifierProblem(value: string): string | undefined {
  if (value.length === 0) return "This field is required";
  if (!SSO_IDENTIFIER_PATTERN.test(value)) return "Your entry contains invalid characters";
  if (value.length < SSO_IDENTIFIER_MIN_LENGTH) return `Must be at least ${SSO_IDENTIFIER_MIN_LENGTH} characters`;
  return undefined;
}

/** Whether a text is an absolute http(s) URL (an identity provider's entry point). */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

/**
 * A certificate as stored: the base64 body between the PEM markers in 64-character lines.
 * Accepts the PEM form (markers each exactly once, begin first) or the bare base64 body that IdP
 * metadata carries. Returns undefined for anything else (errors.invalid_certificate_format).
 */
export function normalizeCertificate(input: string): string | undefined {
  const text = input.trim();
  const begins = text.split(BEGIN).length - 1;
  const ends = text.split(END).length - 1;
  let body: string;
  if (begins === 0 && ends === 0) body = text;
  else if (begins === 1 && ends === 1 && text.startsWith(BEGIN) && text.endsWith(END)) {
    body = text.slice(BEGIN.length, text.length - END.length);
  } else return undefined;
  body = body.replace(/\s+/g, "");
  // DER certificates start with a SEQUENCE (0x30 0x82 → "MII"); the body is plain base64.
  if (!/^MI[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0 || body.length < 100) return undefined;
  const lines = body.match(new RegExp(`.{1,${PEM_LINE_LENGTH}}`, "g")) ?? [];
  return [BEGIN, ...lines, END].join("\n");
}

/** What IdP metadata gives the dialog: the entry point, the issuer and the signing certificate. */
export type SamlMetadata = { entryPoint: string; issuer: string; certificate: string };

// ---------------------------------------------------------------------------------------------
// Verified domains (docs/identity.md "Verified domains"): an identity provider signs in only
// addresses at domains one of its organizations has proven to control with a DNS TXT record.

/** The TXT record's prefix: `flotilla-verification=<token>`, published on the domain itself. */
export const DOMAIN_VERIFICATION_PREFIX = "flotilla-verification=";
/** How many domains one organization may add. */
export const MAX_DOMAINS_PER_ORGANIZATION = 50;
/** A domain's state: added and not yet found in DNS; found; or no longer found by a re-check. */
export const DOMAIN_STATES = ["pending", "verified", "failed"] as const;
export type DomainState = (typeof DOMAIN_STATES)[number];

/** The TXT record that proves an organization controls a domain. */
export const domainVerificationRecord = (token: string) => `${DOMAIN_VERIFICATION_PREFIX}${token}`;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A domain as stored and compared: lowercase ASCII (an internationalized name in its `xn--`
 * form), without a trailing dot. Answers `{ problem }` in words for anything else: an address,
 * a URL, a single label, an IP address, a label that is too long or has other characters.
 */
export function normalizeDomain(input: string): { domain: string } | { problem: string } {
  let value = input.trim().toLowerCase().replace(/\.$/, "");
  if (value === "") return { problem: "This field is required" };
  if (value.length > 253) return { problem: "A domain name has at most 253 characters" };
  if (value.includes("@")) return { problem: "Enter the domain only, without a name and @ (e.g. example.com)" };
  if (/[/:?#\s]/.test(value)) return { problem: "Enter a domain name such as example.com, without https:// or a path" };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: any character outside ASCII
  if (/[^\x00-\x7f]/.test(value)) {
    try {
      value = new URL(`http://${value}`).hostname;
    } catch {
      return { problem: "Your entry contains invalid characters" };
    }
  }
  const labels = value.split(".");
  if (labels.length < 2) return { problem: "Enter a full domain name such as example.com" };
  if (labels.some((label) => label.length > 63))
    return { problem: "Each part of a domain name has at most 63 characters" };
  if (!labels.every((label) => LABEL.test(label))) return { problem: "Your entry contains invalid characters" };
  if (/^\d+$/.test(labels.at(-1) ?? "")) return { problem: "Enter a domain name, not an IP address" };
  if (value.length > 253) return { problem: "A domain name has at most 253 characters" };
  return { domain: value };
}

/** The domain of an email address, normalized as `normalizeDomain` does; undefined when it has none. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf("@");
  if (at < 1) return undefined;
  const normalized = normalizeDomain(email.slice(at + 1));
  return "domain" in normalized ? normalized.domain : undefined;
}
