import type { Tx } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { createPersonalOrganization } from "../account/service.ts";
import { createUser, findUserById, type User } from "../users/service.ts";
import type { SocialIdentity } from "./social.ts";

/**
 * Which user a social sign-in is. A linked account (provider, remote id) signs in. Otherwise the
 * email decides, and only an email the provider has verified: an account with that email gets
 * the provider linked (if that account's own email was verified: an unverified account may have
 * been registered by somebody else, who set its password), and an email nobody has becomes a
 * new account without a password, with its personal organization. An unverified email neither
 * links nor creates.
 */
export async function resolveSocialAccount(
  tx: Tx,
  provider: { slug: string; name: string },
  identity: SocialIdentity,
): Promise<User> {
  const { rows: linked } = await tx.query<{ user: number }>(
    `SELECT belongs_to__user AS "user" FROM "social_service_account" WHERE provider = $1 AND remote_id = $2`,
    [provider.slug, identity.remoteId],
  );
  if (linked[0]) {
    if (identity.displayName) {
      await tx.query(`UPDATE "social_service_account" SET display_name = $3 WHERE provider = $1 AND remote_id = $2`, [
        provider.slug,
        identity.remoteId,
        identity.displayName,
      ]);
    }
    const user = await findUserById(tx.orm, linked[0].user);
    if (!user) throw new FlotillaError("social_login_failed", undefined, { params: { provider: provider.name } });
    return user;
  }
  const email = identity.email;
  if (!email) throw new FlotillaError("social_email_required", undefined, { params: { provider: provider.name } });
  const params = { provider: provider.name, email };
  const { rows: existing } = await tx.query<{ id: number; is_verified: boolean }>(
    `SELECT id, is_verified FROM "user" WHERE lower(email) = lower($1)`,
    [email],
  );
  let userId: number;
  if (existing[0]) {
    if (!identity.emailVerified) throw new FlotillaError("social_email_unverified_existing", undefined, { params });
    if (!existing[0].is_verified) throw new FlotillaError("social_account_unverified", undefined, { params });
    userId = existing[0].id;
  } else {
    if (!identity.emailVerified) throw new FlotillaError("social_email_unverified", undefined, { params });
    const created = await createUser(tx.orm, { email, password: null, isVerified: true });
    await createPersonalOrganization(tx.orm, created);
    userId = created.id;
  }
  // Two callbacks of one sign-in at once: the second finds the link made by the first.
  await tx.query(
    `INSERT INTO "social_service_account" (belongs_to__user, provider, remote_id, display_name)
     VALUES ($1, $2, $3, $4) ON CONFLICT (provider, remote_id) DO NOTHING`,
    [userId, provider.slug, identity.remoteId, identity.displayName ?? null],
  );
  const user = await findUserById(tx.orm, userId);
  if (!user) throw new FlotillaError("social_login_failed", undefined, { params: { provider: provider.name } });
  return user;
}
