import { describe, expect, it } from "vitest";
import { samlErrorText } from "./saml-errors.ts";

describe("samlErrorText", () => {
  it("words the SAML codes the API puts in saml_error", () => {
    expect(samlErrorText("saml_login_failed")).toMatch(/^Single sign-on failed/);
    expect(samlErrorText("saml_email_mismatch")).toMatch(/does not match/);
    expect(samlErrorText("saml_account_mismatch")).toMatch(/linked to another user/);
    expect(samlErrorText("saml_require_login")).toMatch(/Log in to it first/);
    expect(samlErrorText("unknown_sso_identifier", { ssoIdentifier: "acme" })).toBe("Unknown SSO identifier: acme");
    expect(samlErrorText("saml_domain_not_verified", { domain: "example.com" })).toBe(
      "This identity provider may not sign in addresses at example.com: its organization has not verified that domain.",
    );
    expect(samlErrorText("saml_domain_not_verified")).toBe(
      "This identity provider may not sign in addresses at this domain: its organization has not verified that domain.",
    );
  });

  it("names an unknown code inside a general failure", () => {
    expect(samlErrorText("weird_code")).toBe(
      "Single sign-on failed (weird_code). Please try again or contact your administrator.",
    );
  });
});
