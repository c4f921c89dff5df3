import { t } from "../../lib/i18n.ts";

/** The SAML failures the API names in a redirect's `saml_error` (packages/domain errors.ts). */
const SAML_ERROR_KEYS = {
  saml_login_failed: "errors.saml_login_failed",
  saml_account_mismatch: "errors.saml_account_mismatch",
  saml_require_login: "errors.saml_require_login",
  saml_email_mismatch: "errors.saml_email_mismatch",
  unknown_sso_identifier: "errors.unknown_sso_identifier",
} as const;

/**
 * The words for a `saml_error` query (spec 1 §8): the catalogue text of a known code; any other
 * code is named in a general failure text (never shown bare).
 */
export function samlErrorText(code: string, params: { ssoIdentifier?: string } = {}): string {
  const key = SAML_ERROR_KEYS[code as keyof typeof SAML_ERROR_KEYS];
  if (key) return t(key, { ssoIdentifier: params.ssoIdentifier ?? "" });
  return t("errors.saml_error_unknown", { error: code.slice(0, 100) });
}
