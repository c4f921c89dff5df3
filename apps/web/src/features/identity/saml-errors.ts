import { t } from "../../lib/i18n.ts";

/** The SAML failures the API names in a redirect's `saml_error` (packages/domain errors.ts). */
const SAML_ERROR_KEYS = {
  saml_login_failed: "errors.saml_login_failed",
  saml_account_mismatch: "errors.saml_account_mismatch",
  saml_require_login: "errors.saml_require_login",
  saml_email_mismatch: "errors.saml_email_mismatch",
  unknown_sso_identifier: "errors.unknown_sso_identifier",
  saml_provider_not_in_plan: "errors.saml_provider_not_in_plan",
  saml_domain_not_verified: "errors.saml_domain_not_verified",
} as const;

/**
 * The words for a `saml_error` query (spec 1 §8): the catalogue text of a known code (with the
 * `domain` of saml_domain_not_verified); any other code is named in a general failure text
 * (never shown bare).
 */
export function samlErrorText(code: string, params: { ssoIdentifier?: string; domain?: string } = {}): string {
  const key = SAML_ERROR_KEYS[code as keyof typeof SAML_ERROR_KEYS];
  if (key) {
    // The refused domain comes with the code (`&domain=`); bounded, as any query text shown.
    const domain = params.domain?.slice(0, 253) || t("errors.saml_domain_unnamed");
    return t(key, { ssoIdentifier: params.ssoIdentifier ?? "", domain });
  }
  return t("errors.saml_error_unknown", { error: code.slice(0, 100) });
}
