import crypto from "node:crypto";
import { GLOBAL_ROLE_PERMISSION, isGlobalRole, SESSION_TOKEN_LIFETIME_MS } from "@flotilla/domain";
import { and, eq, gt, isNull, ne, sql } from "drizzle-orm";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Orm } from "../../db/index.ts";
import { user_session } from "../../db/schema/index.ts";
import { FlotillaError } from "../../errors.ts";
import { globalRolesOf, type User } from "../users/service.ts";

/** What a session token carries (spec 1 §3), plus the session it belongs to. */
export type SessionClaims = {
  id: number;
  actor: number;
  username: string;
  email: string | null;
  authTime: number;
  actualUser?: number;
  twoFactorRequired?: boolean;
  /**
   * Set on the tokens of a session an OAuth application holds (POST /oauth/token): the id of the
   * `oauth_application`. Such a token acts for the user on their data but never manages
   * credentials (lib/delegation.ts); every token of the session carries it on.
   */
  delegatedTo?: number;
  permissions: string[];
  session: string;
};

/** The permissions that stand for global roles (spec 1 §3: admin.home, support.home). */
const permissionsOf = (roles: string[]) => roles.flatMap((r) => (isGlobalRole(r) ? [GLOBAL_ROLE_PERMISSION[r]] : []));

/**
 * The two-factor flag of a token (spec 1 §4): absent when the user has no two-factor, `true`
 * while the second factor is pending, `false` once passed.
 */
type TwoFactorState = boolean | undefined;

/** Carries a session's two-factor state over to a new token of it (refresh, re-authentication). */
function carriedTwoFactor(u: User, claims: SessionClaims): TwoFactorState {
  if (!u.totp_secret) return undefined;
  // Two-factor enabled in another session since this one began: this one had signed in already.
  return claims.twoFactorRequired ?? false;
}

/** What every new token of a session keeps from the one it replaces: who acts, for whom. */
const carried = (claims: SessionClaims) => ({ actualUser: claims.actualUser, delegatedTo: claims.delegatedTo });

export function createSessionTokens(orm: Orm, secret: Uint8Array) {
  async function sign(
    u: User,
    session: string,
    authTime: number,
    twoFactor: TwoFactorState,
    { actualUser, delegatedTo }: Pick<SessionClaims, "actualUser" | "delegatedTo"> = {},
  ): Promise<string> {
    const roles = await globalRolesOf(orm, u.id);
    const claims: SessionClaims = {
      id: u.id,
      actor: u.actor,
      username: u.username,
      email: u.email,
      authTime,
      ...(actualUser === undefined ? {} : { actualUser }),
      ...(twoFactor === undefined ? {} : { twoFactorRequired: twoFactor }),
      ...(delegatedTo === undefined ? {} : { delegatedTo }),
      permissions: permissionsOf(roles),
      session,
    };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt()
      .setExpirationTime(new Date(Date.now() + SESSION_TOKEN_LIFETIME_MS))
      .sign(secret);
  }

  return {
    /**
     * Starts a session (login): a new revocable session row and its first token. A user with
     * two-factor gets a token that may only complete the second factor, unless the login checked
     * it already (`secondFactorPassed`: a locked login let through by a right code).
     */
    async start(u: User, { secondFactorPassed = false } = {}): Promise<string> {
      const session = crypto.randomUUID();
      await orm.insert(user_session).values({
        id: session,
        user: u.id,
        expires_at: new Date(Date.now() + SESSION_TOKEN_LIFETIME_MS),
      });
      return sign(u, session, Date.now(), u.totp_secret ? !secondFactorPassed : undefined);
    },

    /**
     * "Log in as user" (spec 3 §6): a new session of `u` whose tokens name the platform
     * administrator behind it as `actualUser`; the target's second factor does not apply.
     */
    async startAs(u: User, actualUser: number): Promise<string> {
      const session = crypto.randomUUID();
      await orm.insert(user_session).values({
        id: session,
        user: u.id,
        expires_at: new Date(Date.now() + SESSION_TOKEN_LIFETIME_MS),
      });
      return sign(u, session, Date.now(), u.totp_secret ? false : undefined, { actualUser });
    },

    /**
     * A session for an OAuth application (POST /oauth/token): `authTime` is the granting session's,
     * and the second factor counts as passed (only a session past it can grant). Its tokens are
     * delegated (`delegatedTo`: the application): they never count as a fresh sign-in and are
     * refused wherever credentials are managed (lib/delegation.ts). Returns the session id too.
     */
    async startDelegated(u: User, authTime: number, application: number): Promise<{ token: string; session: string }> {
      const session = crypto.randomUUID();
      await orm.insert(user_session).values({
        id: session,
        user: u.id,
        expires_at: new Date(Date.now() + SESSION_TOKEN_LIFETIME_MS),
      });
      const token = await sign(u, session, authTime, u.totp_secret ? false : undefined, { delegatedTo: application });
      return { token, session };
    },

    /** A fresh token for the same session, keeping its authTime (the SDK's hourly refresh). */
    async refresh(u: User, claims: SessionClaims): Promise<string> {
      await orm
        .update(user_session)
        .set({ expires_at: new Date(Date.now() + SESSION_TOKEN_LIFETIME_MS) })
        .where(eq(user_session.id, claims.session));
      return sign(u, claims.session, claims.authTime, carriedTwoFactor(u, claims), carried(claims));
    },

    /** Re-authentication (password entered again): the same session, authTime now. */
    async reauthenticate(u: User, claims: SessionClaims): Promise<string> {
      return sign(u, claims.session, Date.now(), carriedTwoFactor(u, claims), carried(claims));
    },

    /** The second factor passed (or two-factor just enabled): the same session, flag false. */
    async passTwoFactor(u: User, claims: SessionClaims): Promise<string> {
      return sign(u, claims.session, claims.authTime, false, carried(claims));
    },

    /** Two-factor disabled: the same session, without the flag. */
    async withoutTwoFactor(u: User, claims: SessionClaims): Promise<string> {
      return sign(u, claims.session, claims.authTime, undefined, carried(claims));
    },

    /** Ends every session of the user but `keep` (password change, logout of other sessions). */
    async revokeOthers(userId: number, keep: string) {
      await orm
        .update(user_session)
        .set({ revoked_at: new Date() })
        .where(and(eq(user_session.user, userId), ne(user_session.id, keep), isNull(user_session.revoked_at)));
    },

    /** Ends every session of the user (password reset). */
    async revokeAll(userId: number) {
      await orm
        .update(user_session)
        .set({ revoked_at: new Date() })
        .where(and(eq(user_session.user, userId), isNull(user_session.revoked_at)));
    },

    /** Verifies signature, expiry and that the session was not revoked. */
    async verify(token: string): Promise<SessionClaims> {
      let claims: SessionClaims;
      try {
        ({ payload: claims } = (await jwtVerify(token, secret, { algorithms: ["HS256"] })) as unknown as {
          payload: SessionClaims;
        });
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) throw new FlotillaError("token_expired");
        throw new FlotillaError("malformed_token");
      }
      if (typeof claims.session !== "string" || typeof claims.id !== "number") {
        throw new FlotillaError("malformed_token");
      }
      // The session's user's global roles as they are now, not as the token was signed: a role
      // granted or removed (Admin → Users, `flotilla-server admin`) counts from the next request.
      const [live] = await orm
        .select({
          id: user_session.id,
          roles: sql<string[] | null>`(SELECT array_agg(r.name) FROM "user__has__role" h
             JOIN "role" r ON r.id = h.role WHERE h."user" = "user_session"."user")`,
        })
        .from(user_session)
        .where(
          and(
            eq(user_session.id, claims.session),
            isNull(user_session.revoked_at),
            gt(user_session.expires_at, new Date()),
          ),
        );
      if (!live) throw new FlotillaError("session_expired");
      return { ...claims, permissions: permissionsOf(live.roles ?? []) };
    },

    async revoke(session: string) {
      await orm.update(user_session).set({ revoked_at: new Date() }).where(eq(user_session.id, session));
    },
  };
}

export type SessionTokens = ReturnType<typeof createSessionTokens>;
