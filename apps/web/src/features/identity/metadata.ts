import { normalizeCertificate, SAML_METADATA_MAX_BYTES, type SamlMetadata } from "@flotilla/domain";

/**
 * IdP federation metadata (spec 1 §5, §9; spec 3 §5), read in the browser: the entity id is the
 * issuer, the single sign-on service's location the entry point (HTTP-Redirect preferred, as the
 * server sends its AuthnRequests that way), and the signing certificate of the IdP's descriptor.
 */
export class MetadataError extends Error {
  readonly reason: "too_large" | "unparseable";
  constructor(reason: "too_large" | "unparseable") {
    super(reason);
    this.name = "MetadataError";
    this.reason = reason;
  }
}

const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";

type XmlParse = (xml: string) => Document | null;

const browserParse: XmlParse = (xml) => new DOMParser().parseFromString(xml, "application/xml");

const elements = (parent: Document | Element, name: string) => Array.from(parent.getElementsByTagNameNS("*", name));

/** The three values of IdP metadata, or a MetadataError when the text is not IdP metadata. */
export function parseSamlMetadata(xml: string, parse: XmlParse = browserParse): SamlMetadata {
  let document: Document | null;
  try {
    document = parse(xml);
  } catch {
    throw new MetadataError("unparseable");
  }
  const root = document?.documentElement;
  if (!document || !root || elements(document, "parsererror").length > 0) throw new MetadataError("unparseable");
  // An EntitiesDescriptor may wrap several entities: the first one that is an IdP is read.
  const entity = [root, ...elements(document, "EntityDescriptor")].find(
    (node) => node.localName === "EntityDescriptor" && elements(node, "IDPSSODescriptor").length > 0,
  );
  const descriptor = entity ? elements(entity, "IDPSSODescriptor")[0] : undefined;
  if (!entity || !descriptor) throw new MetadataError("unparseable");
  const issuer = entity.getAttribute("entityID")?.trim() ?? "";
  const services = elements(descriptor, "SingleSignOnService");
  const service = services.find((s) => s.getAttribute("Binding") === REDIRECT_BINDING) ?? services[0];
  const entryPoint = service?.getAttribute("Location")?.trim() ?? "";
  const keys = elements(descriptor, "KeyDescriptor").filter((key) => {
    const use = key.getAttribute("use");
    return !use || use === "signing";
  });
  const body = keys
    .flatMap((key) => elements(key, "X509Certificate"))
    .map((node) => node.textContent?.trim() ?? "")
    .find((text) => text !== "");
  const certificate = body ? normalizeCertificate(body) : undefined;
  if (!issuer || !entryPoint || !certificate) throw new MetadataError("unparseable");
  return { issuer, entryPoint, certificate };
}

/** Reads an uploaded metadata file: larger than 1,000,000 bytes is refused before it is read. */
export async function readMetadataFile(file: Blob, parse?: XmlParse): Promise<SamlMetadata> {
  if (file.size > SAML_METADATA_MAX_BYTES) throw new MetadataError("too_large");
  return parseSamlMetadata(await file.text(), parse);
}
