import { DOMParser } from "@xmldom/xmldom";
import { describe, expect, it } from "vitest";
import { MetadataError, parseSamlMetadata, readMetadataFile } from "./metadata.ts";

// The unit tests run in Node: xmldom stands in for the browser's DOMParser.
const parse = (xml: string) =>
  new DOMParser({ errorHandler: () => undefined }).parseFromString(xml, "application/xml") as unknown as Document;

const BODY = `MIIC${"A".repeat(200)}`;
const metadata = (descriptor: string, entityId = "https://idp.example.com/entity") =>
  `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${descriptor}</md:IDPSSODescriptor>
</md:EntityDescriptor>`;
const key = (use: string | undefined, body: string) =>
  `<md:KeyDescriptor${use ? ` use="${use}"` : ""}><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
${body}
</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
const sso = (binding: string, location: string) =>
  `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:${binding}" Location="${location}"/>`;

describe("parseSamlMetadata", () => {
  it("reads the issuer, the HTTP-Redirect entry point and the signing certificate as PEM", () => {
    const result = parseSamlMetadata(
      metadata(
        key("encryption", `MIIE${"B".repeat(200)}`) +
          key("signing", BODY) +
          sso("HTTP-POST", "https://idp.example.com/post") +
          sso("HTTP-Redirect", "https://idp.example.com/redirect"),
      ),
      parse,
    );
    expect(result.issuer).toBe("https://idp.example.com/entity");
    expect(result.entryPoint).toBe("https://idp.example.com/redirect");
    const lines = result.certificate.split("\n");
    expect(lines[0]).toBe("-----BEGIN CERTIFICATE-----");
    expect(lines.at(-1)).toBe("-----END CERTIFICATE-----");
    expect(lines[1]).toBe(BODY.slice(0, 64));
  });

  it("takes a key without use, and another binding when there is no HTTP-Redirect", () => {
    const result = parseSamlMetadata(metadata(key(undefined, BODY) + sso("HTTP-POST", "https://idp/post")), parse);
    expect(result.entryPoint).toBe("https://idp/post");
    expect(result.certificate).toContain(BODY.slice(0, 64));
  });

  it.each([
    ["not XML", "<<< not xml"],
    ["XML that is not metadata", "<html><body>hi</body></html>"],
    ["metadata without an IdP", metadata("").replace(/IDPSSODescriptor/g, "SPSSODescriptor")],
    ["an IdP without a certificate", metadata(sso("HTTP-Redirect", "https://idp/sso"))],
    ["an IdP without a sign-on service", metadata(key("signing", BODY))],
    ["a certificate that is not base64", metadata(key("signing", "not a certificate") + sso("HTTP-Redirect", "x"))],
  ])("refuses %s", (_name, xml) => {
    expect(() => parseSamlMetadata(xml, parse)).toThrow(MetadataError);
  });

  it("refuses a file larger than 1,000,000 bytes without reading it", async () => {
    const big = new Blob([new Uint8Array(1_000_001)]);
    await expect(readMetadataFile(big, parse)).rejects.toMatchObject({ reason: "too_large" });
    const ok = new Blob([metadata(key("signing", BODY) + sso("HTTP-Redirect", "https://idp/sso"))]);
    await expect(readMetadataFile(ok, parse)).resolves.toMatchObject({ entryPoint: "https://idp/sso" });
  });
});
