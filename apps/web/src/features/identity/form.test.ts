import { describe, expect, it } from "vitest";
import { type IdpForm, idpBody, idpFormComplete, idpFormErrors } from "./form.ts";

const BODY = `MIIC${"A".repeat(200)}`;
const PEM = `-----BEGIN CERTIFICATE-----\n${BODY}\n-----END CERTIFICATE-----`;
const valid: IdpForm = {
  sso_identifier: "acme_corp-1",
  entry_point: "https://idp.example.com/sso",
  issuer: "https://idp.example.com",
  certificate: PEM,
};

describe("identity provider form", () => {
  it("accepts a valid provider and sends the certificate as PEM with 64-character lines", () => {
    expect(idpFormErrors(valid)).toEqual({});
    const lines = idpBody({ ...valid, certificate: BODY }).certificate.split("\n");
    expect(lines[0]).toBe("-----BEGIN CERTIFICATE-----");
    expect(lines.at(-1)).toBe("-----END CERTIFICATE-----");
    expect(lines.slice(1, -2).every((line) => line.length === 64)).toBe(true);
  });

  it("submits only with all four fields present", () => {
    expect(idpFormComplete(valid)).toBe(true);
    for (const key of Object.keys(valid) as Array<keyof IdpForm>) {
      expect(idpFormComplete({ ...valid, [key]: " " })).toBe(false);
    }
  });

  it.each<[Partial<IdpForm>, keyof IdpForm, string]>([
    [{ sso_identifier: "ab" }, "sso_identifier", "Must be at least 3 characters"],
    [{ sso_identifier: "Acme Corp" }, "sso_identifier", "Your entry contains invalid characters"],
    [{ entry_point: "not a url" }, "entry_point", "Invalid URL"],
    [{ issuer: "" }, "issuer", "This field is required"],
    [{ certificate: "" }, "certificate", "This field is required"],
    [{ certificate: `${PEM}\n${PEM}` }, "certificate", "Invalid certificate format"],
    [{ certificate: `${PEM.replace("-----END CERTIFICATE-----", "")}` }, "certificate", "Invalid certificate format"],
    [
      { certificate: "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----" },
      "certificate",
      "Invalid certificate format",
    ],
  ])("refuses %j", (change, field, message) => {
    expect(idpFormErrors({ ...valid, ...change })[field]).toBe(message);
  });
});
