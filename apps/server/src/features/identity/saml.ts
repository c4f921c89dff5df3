import path from "node:path";
import { type CacheProvider, type Profile, SAML, ValidateInResponseTo } from "@node-saml/node-saml";
import type { Queryable } from "../../db/index.ts";

type Db = Pick<Queryable, "query">;

import { FlotillaError } from "../../errors.ts";
import { type KeyPair, loadKeyPair } from "../../lib/key-pair.ts";

/** An identity provider as the sign-in needs it. */
export type IdentityProvider = {
  id: number;
  sso_identifier: string;
  entry_point: string;
  issuer: string;
  certificate: string;
  requires_signed_authn_response: boolean;
};

/** How long the identity provider has to answer an AuthnRequest. */
const REQUEST_TTL_MS = 10 * 60_000;
/** Clocks of the identity provider and this server may differ this much (NotBefore/NotOnOrAfter). */
const CLOCK_SKEW_MS = 60_000;

/**
 * This server as a SAML service provider of one identity provider: its entity id (the audience
 * of assertions) and the assertion consumer service the IdP posts to. These are what an
 * administrator enters at the IdP (docs/identity.md).
 */
export function serviceProviderUrls(apiUrl: string, ssoIdentifier: string) {
  const entityId = `${apiUrl}/auth/saml/${ssoIdentifier}`;
  return { entityId, acs: `${entityId}/callback`, metadata: `${entityId}/metadata` };
}

/** The key that signs AuthnRequests: `saml/sp.key` and `saml/sp.crt` in the data directory. */
export function loadServiceProviderKeys(dataDir: string): KeyPair {
  return loadKeyPair(path.join(dataDir, "saml", "sp.key"), path.join(dataDir, "saml", "sp.crt"), {
    generate: true,
    commonName: "Flotilla SAML service provider",
  });
}

/** Outstanding request ids in PostgreSQL, so that the instance receiving the answer knows them. */
function requestCache(db: Db): CacheProvider {
  return {
    async saveAsync(key, value) {
      await db.query(`DELETE FROM "saml_request" WHERE created_at < now() - $1 * interval '1 millisecond'`, [
        REQUEST_TTL_MS,
      ]);
      const { rows } = await db.query<{ created_at: Date }>(
        `INSERT INTO "saml_request" (id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING created_at`,
        [key, value],
      );
      return rows[0] ? { value, createdAt: rows[0].created_at.getTime() } : null;
    },
    async getAsync(key) {
      const { rows } = await db.query<{ created_at: Date }>(`SELECT created_at FROM "saml_request" WHERE id = $1`, [
        key,
      ]);
      return rows[0] ? rows[0].created_at.toISOString() : null;
    },
    async removeAsync(key) {
      if (key === null) return null;
      const { rows } = await db.query<{ id: string }>(`DELETE FROM "saml_request" WHERE id = $1 RETURNING id`, [key]);
      return rows[0]?.id ?? null;
    },
  };
}

function serviceProvider(idp: IdentityProvider, apiUrl: string, keys: KeyPair, db: Db): SAML {
  const urls = serviceProviderUrls(apiUrl, idp.sso_identifier);
  return new SAML({
    entryPoint: idp.entry_point,
    issuer: urls.entityId,
    callbackUrl: urls.acs,
    audience: urls.entityId,
    idpCert: idp.certificate,
    // Assertions are always signed; the whole response too when the provider says it signs it.
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: idp.requires_signed_authn_response,
    privateKey: keys.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicCert: keys.certificatePem,
    signatureAlgorithm: "sha256",
    digestAlgorithm: "sha256",
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    // Only answers to requests this server sent (no IdP-initiated sign-in): InResponseTo must be known.
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    cacheProvider: requestCache(db),
    // The identity provider picks the NameID format; the email comes from an attribute or the NameID.
    identifierFormat: null,
    disableRequestedAuthnContext: true,
  });
}

/** The URL that sends the browser to the identity provider with a signed AuthnRequest. */
export function authorizeUrl(idp: IdentityProvider, apiUrl: string, keys: KeyPair, db: Db): Promise<string> {
  return serviceProvider(idp, apiUrl, keys, db).getAuthorizeUrlAsync("", undefined, {});
}

/** The service provider's metadata XML, for the identity provider's administrator. */
export function serviceProviderMetadata(idp: IdentityProvider, apiUrl: string, keys: KeyPair, db: Db): string {
  return serviceProvider(idp, apiUrl, keys, db).generateServiceProviderMetadata(null, keys.certificatePem);
}

/** Who the identity provider says signed in. */
export type SamlIdentity = { remoteId: string; email: string; displayName: string | undefined };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const EMAIL_ATTRIBUTES = [
  "email",
  "mail",
  "urn:oid:0.9.2342.19200300.100.1.3",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
];
const NAME_ATTRIBUTES = ["displayName", "http://schemas.microsoft.com/identity/claims/displayname", "name", "cn"];

/**
 * Validates the IdP's answer posted to the assertion consumer service: signatures with the
 * provider's certificate, audience, time conditions (with CLOCK_SKEW_MS), InResponseTo against
 * requests this server sent (node-saml), then what node-saml leaves to us: the assertion's issuer
 * is the provider's, its recipient is this ACS, and its id has not been used before. Any failure
 * is `saml_login_failed`; the reason goes to the log, not to the browser.
 */
export async function validateResponse(
  idp: IdentityProvider,
  samlResponse: string,
  apiUrl: string,
  keys: KeyPair,
  db: Db,
  log: { info(obj: object, msg: string): void },
): Promise<SamlIdentity> {
  const refuse = (reason: string): never => {
    log.info({ identityProvider: idp.id, reason }, "SAML response refused");
    throw new FlotillaError("saml_login_failed");
  };
  let profile: Profile | null;
  try {
    ({ profile } = await serviceProvider(idp, apiUrl, keys, db).validatePostResponseAsync({
      SAMLResponse: samlResponse,
    }));
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
  if (!profile) return refuse("no assertion");
  if (profile.issuer !== idp.issuer) refuse(`issuer ${profile.issuer} is not ${idp.issuer}`);
  const assertion = (profile.getAssertion?.() ?? {}) as {
    Assertion?: {
      $?: { ID?: string };
      Subject?: {
        SubjectConfirmation?: { SubjectConfirmationData?: { $?: { Recipient?: string; NotOnOrAfter?: string } }[] }[];
      }[];
      Conditions?: { $?: { NotOnOrAfter?: string } }[];
    };
  };
  const confirmations = assertion.Assertion?.Subject?.[0]?.SubjectConfirmation ?? [];
  const data = confirmations.flatMap((c) => c.SubjectConfirmationData ?? []).map((d) => d.$ ?? {});
  const acs = serviceProviderUrls(apiUrl, idp.sso_identifier).acs;
  if (!data.some((d) => d.Recipient === acs)) refuse("recipient is not this assertion consumer service");
  const assertionId = assertion.Assertion?.$?.ID;
  if (!assertionId) return refuse("assertion without ID");
  const expiry =
    data.find((d) => d.NotOnOrAfter)?.NotOnOrAfter ?? assertion.Assertion?.Conditions?.[0]?.$?.NotOnOrAfter;
  const expiresAt = expiry ? new Date(Date.parse(expiry) + CLOCK_SKEW_MS) : new Date(Date.now() + REQUEST_TTL_MS);
  await db.query(`DELETE FROM "saml_assertion" WHERE expires_at < now()`);
  const { rows } = await db.query(
    `INSERT INTO "saml_assertion" (id, identity_provider, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id`,
    [assertionId, idp.id, expiresAt],
  );
  if (rows.length === 0) refuse(`assertion ${assertionId} replayed`);

  const attribute = (names: string[]) =>
    names.map((n) => profile[n]).find((v): v is string => typeof v === "string" && v.trim() !== "");
  const email = attribute(EMAIL_ATTRIBUTES) ?? (EMAIL.test(profile.nameID ?? "") ? profile.nameID : undefined);
  if (!profile.nameID) return refuse("no NameID");
  if (!email || !EMAIL.test(email)) return refuse("no email address in the assertion");
  return { remoteId: profile.nameID, email: email.trim(), displayName: attribute(NAME_ATTRIBUTES) };
}
