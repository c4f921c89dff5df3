import type { FastifyBaseLogger } from "fastify";
import * as oidc from "openid-client";
import type { SocialProvider } from "../../config.ts";
import { FlotillaError } from "../../errors.ts";

/**
 * The provider side of social sign-in, with openid-client: authorization code flow with PKCE
 * (S256), `state` and, for OpenID Connect, `nonce`; id_token validation and user info.
 *
 * Provider URLs come from the operator's environment (FLOTILLA_OIDC_*_ISSUER, the GitHub URLs),
 * and the endpoints discovery finds are the issuer's own: nothing here fetches a URL a user gave,
 * so these calls do not go through the guarded fetcher (lib/outbound-fetch.ts, DESIGN §12),
 * whose public-address rule would refuse the usual self-hosted setup (Keycloak or Dex on the
 * internal network). They use openid-client's fetch with a deadline instead.
 */

/** What a provider says about the person signing in. */
export type SocialIdentity = {
  /** The provider's stable id: `sub` for OpenID Connect, the numeric user id for GitHub. */
  remoteId: string;
  email: string | undefined;
  /** The provider vouches that the person controls `email`. */
  emailVerified: boolean;
  displayName: string | undefined;
};

/** Each call to the provider (discovery, token, user info) gets this many seconds. */
const TIMEOUT_SECONDS = 10;
/** A discovered configuration is used this long before the provider's metadata is read again. */
const DISCOVERY_TTL_MS = 60 * 60_000;

const SCOPES = { oidc: "openid email profile", github: "read:user user:email" } as const;

const configurations = new Map<string, { at: number; configuration: Promise<oidc.Configuration> }>();

function githubConfiguration(provider: Extract<SocialProvider, { kind: "github" }>): oidc.Configuration {
  const configuration = new oidc.Configuration(
    {
      issuer: provider.webUrl,
      authorization_endpoint: `${provider.webUrl}/login/oauth/authorize`,
      token_endpoint: `${provider.webUrl}/login/oauth/access_token`,
    },
    provider.clientId,
    undefined,
    oidc.ClientSecretPost(provider.clientSecret),
  );
  if (provider.webUrl.startsWith("http:")) oidc.allowInsecureRequests(configuration);
  configuration.timeout = TIMEOUT_SECONDS;
  return configuration;
}

/** The provider's client configuration: discovered (and cached) for OpenID Connect, fixed for GitHub. */
async function configurationFor(provider: SocialProvider): Promise<oidc.Configuration> {
  if (provider.kind === "github") return githubConfiguration(provider);
  const key = `${provider.slug} ${provider.issuer} ${provider.clientId}`;
  const cached = configurations.get(key);
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.configuration;
  const configuration = oidc.discovery(
    new URL(provider.issuer),
    provider.clientId,
    undefined,
    oidc.ClientSecretPost(provider.clientSecret),
    {
      timeout: TIMEOUT_SECONDS,
      // An http issuer is the operator's explicit choice (a test or internal provider).
      ...(provider.issuer.startsWith("http:") ? { execute: [oidc.allowInsecureRequests] } : {}),
    },
  );
  configurations.set(key, { at: Date.now(), configuration });
  // A failed discovery is not kept: the next sign-in tries again.
  configuration.catch(() => {
    if (configurations.get(key)?.configuration === configuration) configurations.delete(key);
  });
  return configuration;
}

/** The values a sign-in keeps on the server between the redirect and the callback. */
export type FlowSecrets = { state: string; codeVerifier: string; nonce: string };

export function newFlowSecrets(): FlowSecrets {
  return { state: oidc.randomState(), codeVerifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce() };
}

/** Where to send the browser: the provider's authorization endpoint with PKCE, state and nonce. */
export async function authorizationUrl(
  provider: SocialProvider,
  redirectUri: string,
  secrets: FlowSecrets,
  log: FastifyBaseLogger,
): Promise<string> {
  const configuration = await configurationFor(provider).catch((error: unknown) => {
    throw unavailable(provider, error, log);
  });
  const parameters: Record<string, string> = {
    redirect_uri: redirectUri,
    scope: SCOPES[provider.kind],
    state: secrets.state,
    code_challenge: await oidc.calculatePKCECodeChallenge(secrets.codeVerifier),
    code_challenge_method: "S256",
  };
  if (provider.kind === "oidc") parameters.nonce = secrets.nonce;
  return oidc.buildAuthorizationUrl(configuration, parameters).href;
}

/**
 * Finishes the flow: `callbackUrl` is the redirect URI with the provider's answer (code, state,
 * iss, or error) in its query. Exchanges the code (with the PKCE verifier), checks state, issuer,
 * the id_token's signature, audience and nonce, and reads who signed in.
 */
export async function finishSignIn(
  provider: SocialProvider,
  callbackUrl: URL,
  secrets: FlowSecrets,
  log: FastifyBaseLogger,
): Promise<SocialIdentity> {
  const configuration = await configurationFor(provider).catch((error: unknown) => {
    throw unavailable(provider, error, log);
  });
  try {
    if (provider.kind === "github") {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: secrets.state,
      });
      return await githubIdentity(provider, tokens.access_token);
    }
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: secrets.codeVerifier,
      expectedState: secrets.state,
      expectedNonce: secrets.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new oidc.ClientError("no id_token claims");
    // Many providers put email and name in the user info only (the scopes' claims).
    const info: Record<string, unknown> = configuration.serverMetadata().userinfo_endpoint
      ? { ...claims, ...(await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub)) }
      : { ...claims };
    const email = typeof info.email === "string" && info.email.includes("@") ? info.email.trim() : undefined;
    const name = [info.name, info.preferred_username, email].find((v) => typeof v === "string" && v.trim() !== "");
    return {
      remoteId: claims.sub,
      email,
      emailVerified: email !== undefined && (info.email_verified === true || info.email_verified === "true"),
      displayName: name as string | undefined,
    };
  } catch (error) {
    if (error instanceof FlotillaError) throw error;
    if (
      error instanceof oidc.AuthorizationResponseError ||
      error instanceof oidc.ResponseBodyError ||
      error instanceof oidc.ClientError
    ) {
      log.warn({ provider: provider.slug, err: error }, "social sign-in refused");
      throw new FlotillaError("social_login_failed", undefined, { params: { provider: provider.name } });
    }
    throw unavailable(provider, error, log);
  }
}

function unavailable(provider: SocialProvider, error: unknown, log: FastifyBaseLogger) {
  log.error({ provider: provider.slug, err: error }, "social sign-in provider unavailable");
  return new FlotillaError("social_provider_unavailable", undefined, { params: { provider: provider.name } });
}

/** GitHub has no id_token: the user is `/user`, the verified email from `/user/emails`. */
async function githubIdentity(
  provider: Extract<SocialProvider, { kind: "github" }>,
  accessToken: string,
): Promise<SocialIdentity> {
  const get = async (path: string) => {
    const response = await fetch(`${provider.apiUrl}${path}`, {
      headers: {
        accept: "application/vnd.github+json",
        authorization: `Bearer ${accessToken}`,
        "user-agent": "Flotilla",
        "x-github-api-version": "2022-11-28",
      },
      signal: AbortSignal.timeout(TIMEOUT_SECONDS * 1000),
    });
    if (!response.ok) throw new Error(`GitHub API ${path}: ${response.status}`);
    return (await response.json()) as unknown;
  };
  const user = (await get("/user")) as { id?: unknown; login?: unknown; name?: unknown; email?: unknown };
  if (typeof user.id !== "number" && typeof user.id !== "string") throw new Error("GitHub API /user: no id");
  const emails = (await get("/user/emails")) as { email?: unknown; primary?: unknown; verified?: unknown }[];
  const listed = Array.isArray(emails) ? emails.filter((e) => typeof e.email === "string") : [];
  const chosen =
    listed.find((e) => e.primary === true && e.verified === true) ??
    listed.find((e) => e.verified === true) ??
    listed.find((e) => e.primary === true) ??
    (typeof user.email === "string" ? { email: user.email, verified: false } : undefined);
  const name = [user.name, user.login].find((v) => typeof v === "string" && v.trim() !== "");
  return {
    remoteId: String(user.id),
    email: chosen ? String(chosen.email).trim() : undefined,
    emailVerified: chosen?.verified === true,
    displayName: name as string | undefined,
  };
}
