import crypto from "node:crypto";
import { SignJWT } from "jose";
import type { RegistryKeys } from "./keys.ts";
import type { Access } from "./scopes.ts";

/** The token issuer the registry's `auth.token.issuer` must name. */
export const REGISTRY_TOKEN_ISSUER = "flotilla";
/** Long enough for a slow pull's manifest and layer requests; clients ask again after a 401. */
export const REGISTRY_TOKEN_SECONDS = 900;
/** Tolerated clock skew between this server and the registry. */
const SKEW_SECONDS = 30;

export type RegistryToken = { token: string; access_token: string; expires_in: number; issued_at: string };

/**
 * An RS256 JWT as the distribution registry checks it: the signing certificate in `x5c` (it
 * chains to the registry's rootcertbundle), `aud` the registry's service name, `access` what
 * was granted.
 */
export async function signRegistryToken(
  keys: RegistryKeys,
  values: { subject: string; service: string; access: Access[] },
  now = new Date(),
): Promise<RegistryToken> {
  const issuedAt = Math.floor(now.getTime() / 1000);
  const token = await new SignJWT({ access: values.access })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", x5c: [keys.certificateDer] })
    .setIssuer(REGISTRY_TOKEN_ISSUER)
    .setSubject(values.subject)
    .setAudience(values.service)
    .setIssuedAt(issuedAt)
    .setNotBefore(issuedAt - SKEW_SECONDS)
    .setExpirationTime(issuedAt + REGISTRY_TOKEN_SECONDS)
    .setJti(crypto.randomUUID())
    .sign(keys.privateKey);
  return { token, access_token: token, expires_in: REGISTRY_TOKEN_SECONDS, issued_at: now.toISOString() };
}
