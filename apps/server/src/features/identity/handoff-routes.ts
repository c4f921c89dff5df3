import crypto from "node:crypto";
import type { FastifyInstance } from "fastify";
import { SignJWT } from "jose";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { findUserById, type User } from "../users/service.ts";

const returnToQuery = z.object({
  return_to: z
    .string()
    .max(2000)
    .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), "must be an http(s) URL")
    .optional(),
});

const displayName = (user: User) => [user.first_name, user.last_name].filter(Boolean).join(" ").trim() || user.username;

/**
 * Handoffs to the support portal and the chat widget (spec 1 §2.1 `/zendesk-login`, §7):
 * identities signed with secrets the operator shares with those services.
 */
export async function handoffRoutes(app: FastifyInstance, { db, config }: AppContext) {
  const signedInUser = async (request: Parameters<typeof requireAuth>[0], missing: "chat" | "portal") => {
    const caller = requireAuth(request);
    // A fleet's or a device's key has no user to hand over.
    if (!caller.user) {
      throw missing === "chat" ? new FlotillaError("chat_missing_user_id") : new FlotillaError("forbidden");
    }
    const user = await findUserById(db.orm, caller.user.id);
    if (!user) throw new FlotillaError("not_logged_in");
    return user;
  };

  /**
   * The support portal's JWT single sign-on (Zendesk's shape: HS256 with iat, jti, email, name,
   * external_id). The dashboard calls this with fetch (a bearer token, cross-origin), so the
   * answer is the URL to send the browser to, `{ url }`, not a redirect a fetch would follow.
   */
  app.get("/zendesk/v1/login", async (request) => {
    const user = await signedInUser(request, "portal");
    const { return_to: returnTo } = parseInput(returnToQuery, request.query);
    if (!config.supportPortal) throw new FlotillaError("support_portal_not_configured");
    // The portal believes the email: only an address its owner has verified is handed over.
    if (!user.email || !user.is_verified) {
      throw new FlotillaError("forbidden", "Verify your email address before signing in to the support portal.");
    }
    const jwt = await new SignJWT({
      email: user.email,
      name: displayName(user),
      external_id: String(user.id),
    })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt()
      .setJti(crypto.randomUUID())
      .sign(new TextEncoder().encode(config.supportPortal.secret));
    const url = new URL(config.supportPortal.url);
    url.searchParams.set("jwt", jwt);
    if (returnTo) url.searchParams.set("return_to", returnTo);
    return { url: url.href };
  });

  /**
   * The chat widget's identity (Intercom's identity verification): `user_hash` is the
   * HMAC-SHA256 of `user_id` with the chat secret, so the widget cannot be told another user's id.
   */
  app.get("/user/v1/intercom", async (request) => {
    const user = await signedInUser(request, "chat");
    if (!config.chatSecret) throw new FlotillaError("chat_missing_username_hash");
    const userId = String(user.id);
    return {
      user_id: userId,
      name: displayName(user),
      email: user.email,
      user_hash: crypto.createHmac("sha256", config.chatSecret).update(userId).digest("hex"),
    };
  });
}
