import { isHttpUrl, normalizeCertificate, ssoIdentifierProblem } from "@flotilla/domain";
import { t } from "../../lib/i18n.ts";

/** The add/edit identity provider form (spec 1 §5; spec 3 §5). */
export interface IdpForm {
  sso_identifier: string;
  entry_point: string;
  issuer: string;
  certificate: string;
}

export type IdpFormErrors = Partial<Record<keyof IdpForm, string>>;

/** Submit is enabled only when all four are present (spec 3 §5). */
export const idpFormComplete = (form: IdpForm) =>
  (Object.keys(form) as Array<keyof IdpForm>).every((key) => form[key].trim() !== "");

/**
 * The field errors, with the domain rules the data API applies too (so what the form accepts is
 * what the server stores); `certificate` is the stored PEM form when it is valid.
 */
export function idpFormErrors(form: IdpForm): IdpFormErrors {
  const errors: IdpFormErrors = {};
  const sso = ssoIdentifierProblem(form.sso_identifier.trim());
  if (sso) {
    errors.sso_identifier =
      sso === "Your entry contains invalid characters" ? t("errors.sso_identifier_invalid_characters") : sso;
  }
  if (form.entry_point.trim() === "") errors.entry_point = t("form.required");
  else if (!isHttpUrl(form.entry_point.trim())) errors.entry_point = t("errors.invalid_url");
  if (form.issuer.trim() === "") errors.issuer = t("form.required");
  if (form.certificate.trim() === "") errors.certificate = t("form.required");
  else if (!normalizeCertificate(form.certificate)) errors.certificate = t("errors.invalid_certificate_format");
  return errors;
}

/** What is sent: trimmed, the certificate as PEM with 64-character lines (spec 1 §9). */
export function idpBody(form: IdpForm): IdpForm {
  return {
    sso_identifier: form.sso_identifier.trim(),
    entry_point: form.entry_point.trim(),
    issuer: form.issuer.trim(),
    certificate: normalizeCertificate(form.certificate) ?? form.certificate.trim(),
  };
}
