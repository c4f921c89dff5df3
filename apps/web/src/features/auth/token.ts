import { noteServerTime, serverNow } from "../../lib/server-clock.ts";

/**
 * The session token's content as the dashboard reads it (spec 1 §3): the JWT payload, decoded
 * client-side without checking the signature (the API does that). A token that is not a JWT
 * with a numeric id is malformed and counts as no session (spec 1 §8).
 */
export interface TokenClaims {
  id: number;
  username?: string;
  email?: string | null;
  authTime?: number;
  actualUser?: number;
  twoFactorRequired?: boolean;
  permissions: string[];
  exp?: number;
  /** Issued at (seconds since the epoch). */
  iat?: number;
}

export type TwoFactorState = "disabled" | "pending" | "passed";

function base64UrlDecode(part: string): string {
  const base64 = part
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(part.length / 4) * 4, "=");
  const binary = atob(base64);
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

export function decodeToken(token: string | undefined | null): TokenClaims | undefined {
  if (typeof token !== "string") return undefined;
  const parts = token.split(".");
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const payload: unknown = JSON.parse(base64UrlDecode(parts[1]));
    if (typeof payload !== "object" || payload === null) return undefined;
    const raw = payload as Record<string, unknown>;
    if (typeof raw.id !== "number") return undefined;
    return {
      id: raw.id,
      username: typeof raw.username === "string" ? raw.username : undefined,
      email: typeof raw.email === "string" ? raw.email : null,
      authTime: typeof raw.authTime === "number" ? raw.authTime : undefined,
      actualUser: typeof raw.actualUser === "number" ? raw.actualUser : undefined,
      twoFactorRequired: typeof raw.twoFactorRequired === "boolean" ? raw.twoFactorRequired : undefined,
      permissions: Array.isArray(raw.permissions)
        ? raw.permissions.filter((p): p is string => typeof p === "string")
        : [],
      exp: typeof raw.exp === "number" ? raw.exp : undefined,
      iat: typeof raw.iat === "number" ? raw.iat : undefined,
    };
  } catch {
    return undefined;
  }
}

/** Disabled: no flag; pending: flag true; passed: flag false (spec 1 §4). */
export function twoFactorState(claims: Pick<TokenClaims, "twoFactorRequired">): TwoFactorState {
  if (claims.twoFactorRequired === undefined) return "disabled";
  return claims.twoFactorRequired ? "pending" : "passed";
}

/** Platform administrators carry `admin.home` (spec 1 §3, §6.1): admin link and red header. */
export const isAdmin = (claims: Pick<TokenClaims, "permissions"> | undefined) =>
  Boolean(claims?.permissions.includes("admin.home"));

/** Platform staff carry `admin.home` (balena_admin) or `support.home` (support_agent). */
export const isSupportStaff = (claims: Pick<TokenClaims, "permissions"> | undefined) =>
  Boolean(claims?.permissions.some((permission) => permission === "admin.home" || permission === "support.home"));

/** Whether the token's expiry (seconds since the epoch) has passed. */
export const isTokenExpired = (claims: Pick<TokenClaims, "exp">, now = serverNow()) =>
  claims.exp !== undefined && claims.exp * 1000 <= now;

/** A token the server has just issued: its `iat` is the server's "now" (see lib/server-clock.ts). */
export function noteFreshToken(token: string | undefined, localMs = Date.now()): void {
  const iat = decodeToken(token)?.iat;
  if (iat !== undefined) noteServerTime(iat * 1000, localMs);
}
