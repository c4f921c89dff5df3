import crypto from "node:crypto";

/**
 * Webhook signatures: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. The time is
 * signed with the body so a receiver can refuse old replays (docs/audit-and-webhooks.md).
 */
export function signWebhook(secret: string, body: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000);
  const v1 = crypto.createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
  return `t=${t},v1=${v1}`;
}

/** A receiver's check (used by tests and shown in the docs): the signature matches and is recent. */
export function verifyWebhook(secret: string, body: string, header: string, toleranceSeconds = 300, now = Date.now()) {
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = crypto.createHmac("sha256", secret).update(`${t}.${body}`).digest();
  const given = Buffer.from(parts.v1, "hex");
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** A new signing secret, shown to the administrator once. */
export const newWebhookSecret = () => `whsec_${crypto.randomBytes(24).toString("base64url")}`;
