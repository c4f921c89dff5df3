import crypto from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
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

/** The registry username under which the builder pushes; its password is a builder credential. */
export const BUILDER_USERNAME = "flotilla-builder";
/** The audience of builder credentials: never a registry's service name, so no registry takes one as a token. */
const BUILDER_AUDIENCE = "flotilla-builder";
/** A build's pushes happen within minutes of its start. */
const BUILDER_CREDENTIAL_SECONDS = 3600;

/**
 * The password the builder's engine sends to the token realm to push one image: signed like a
 * registry token, naming the repository it may push. Any instance that holds the registry key
 * accepts it, so pushes work whichever instance the realm request reaches.
 */
export async function signBuilderCredential(keys: RegistryKeys, repository: string, now = new Date()): Promise<string> {
  const issuedAt = Math.floor(now.getTime() / 1000);
  return new SignJWT({ access: [{ type: "repository", name: repository, actions: ["pull", "push"] }] })
    .setProtectedHeader({ alg: "RS256", typ: "JWT" })
    .setIssuer(REGISTRY_TOKEN_ISSUER)
    .setSubject(BUILDER_USERNAME)
    .setAudience(BUILDER_AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + BUILDER_CREDENTIAL_SECONDS)
    .sign(keys.privateKey);
}

/** What a builder credential allows, or undefined when it is not one this server signed (or expired). */
export async function builderAccess(keys: RegistryKeys, password: string): Promise<Access[] | undefined> {
  try {
    const { payload } = await jwtVerify(password, keys.publicKey, {
      issuer: REGISTRY_TOKEN_ISSUER,
      audience: BUILDER_AUDIENCE,
      subject: BUILDER_USERNAME,
      algorithms: ["RS256"],
    });
    const access = payload.access;
    return Array.isArray(access) ? (access as Access[]) : undefined;
  } catch {
    return undefined;
  }
}
