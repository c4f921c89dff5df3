import type { FastifyRequest } from "fastify";
import { FlotillaError } from "../errors.ts";
import type { ResourceHooks } from "../odata/index.ts";
import type { Caller } from "./authenticate.ts";
import { freshnessError } from "./freshness.ts";

/**
 * Delegated tokens (security review 3, finding 1): the token an OAuth application gets at
 * POST /oauth/token carries `delegatedTo` (sessions.ts). It acts for the user on their fleets and
 * devices, but it never manages credentials: it mints no API key (personal, provisioning or
 * device), adds or removes no SSH key, approves no other application, changes no password, email
 * or second factor, links no identity, signs in nowhere else as the user (support portal, chat),
 * ends no other session and is never a fresh sign-in. So
 * nothing it could make outlives the authorization: revoking it (or the application) ends all.
 */
export const isDelegated = (caller: Pick<Caller, "session"> | undefined): boolean =>
  caller?.session?.delegatedTo !== undefined;

export const delegatedRefusal = () => new FlotillaError("delegated_token_refused");

/**
 * The routes a delegated token is refused on (method and route pattern), refused at
 * authentication (lib/authenticate.ts), before the handler runs. Every `/api-key/...` route too.
 * Writes of credential resources through the data API are refused by `credentialWriteHooks`,
 * and the sensitive actions behind `requireFreshAuth` by the freshness check itself.
 */
const REFUSED_ROUTES = new Set([
  // Keys: a provisioning key in a device configuration.
  "POST /download-config",
  // SSH keys (the data API's user__has__public_key: credentialWriteHooks).
  "POST /user/v1/ssh-keys/import",
  // Approving applications, and their client secrets.
  "POST /oauth/authorize",
  "POST /oauth/applications/:id/secret",
  // Password, email, re-authentication, other sessions, "log in as user".
  "PATCH /user/password",
  "PATCH /user/email",
  "POST /user/v1/refresh-token",
  "POST /logout-others",
  "PATCH /login_",
  // Signing in elsewhere as the user: the support portal's token, the chat widget's identity hash.
  "GET /zendesk/v1/login",
  "GET /user/v1/intercom",
  // Two-factor authentication and recovery codes.
  "GET /auth/totp/setup",
  "POST /auth/totp/verify",
  "POST /auth/totp/disable",
  "POST /auth/v1/2fa-recover/create",
  "POST /auth/v1/2fa-recover/verify",
]);

export function isRefusedToDelegated(method: string, route: string): boolean {
  return route.startsWith("/api-key/") || REFUSED_ROUTES.has(`${method.toUpperCase()} ${route}`);
}

/** The refusal of a route handler that reads the caller itself (e.g. a token in a body). */
export function refuseDelegated(request: Pick<FastifyRequest, "auth">) {
  if (isDelegated(request.auth)) throw delegatedRefusal();
}

/**
 * A sensitive action's check (freshness.ts) with the delegated refusal first: 403
 * `delegated_token_refused` for an application's token, else 403 `auth_expired` unless the
 * session signed in within the last 20 minutes.
 */
export function sensitiveActionError(context: {
  authTime: number | undefined;
  delegated: boolean | undefined;
}): FlotillaError | undefined {
  if (context.delegated) return delegatedRefusal();
  return freshnessError(context.authTime);
}

/**
 * Credentials kept in the data model: API keys (a changed expiry or a removed key is a credential
 * change too), SSH keys, linked identities, OAuth applications. A delegated token writes none.
 */
export const CREDENTIAL_RESOURCES = [
  "api_key",
  "user__has__public_key",
  "social_service_account",
  "saml_account",
  "oauth_application",
] as const;

const refuse = ({ delegated }: { delegated: boolean | undefined }) => {
  if (delegated) throw delegatedRefusal();
};

export const credentialWriteHooks: ResourceHooks = {
  beforeCreate: refuse,
  beforeCreateMany: refuse,
  beforeUpdate: refuse,
  beforeDelete: refuse,
};
