import crypto from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/index.ts";
import { createUser, findUserByLogin, grantGlobalRole, setPassword } from "../users/service.ts";

export const DEMO_EMAIL = "demo@example.com";

/**
 * On a fresh database (the first migration ran in this start) with the demo on, creates the demo
 * account. The password is FLOTILLA_DEMO_PASSWORD, or a generated one printed once in the log.
 */
export async function seedDemo(db: Database, config: Config, log: FastifyBaseLogger, freshDatabase: boolean) {
  if (!config.demo || !freshDatabase) return;
  await db.transaction(async (tx) => {
    if (await findUserByLogin(tx.orm, DEMO_EMAIL)) return;
    const password = config.demoPassword ?? crypto.randomBytes(9).toString("base64url");
    await createUser(tx.orm, { email: DEMO_EMAIL, username: "demo", password, isVerified: true });
    log.info(
      config.demoPassword
        ? `Demo account ${DEMO_EMAIL} created with FLOTILLA_DEMO_PASSWORD`
        : `Demo account ${DEMO_EMAIL} created with password ${password} (shown once)`,
    );
  });
}

/** FLOTILLA_ADMIN_EMAIL + FLOTILLA_ADMIN_PASSWORD: create or reset a platform administrator at every start. */
export async function ensureAdmin(db: Database, config: Config, log: FastifyBaseLogger) {
  const admin = config.admin;
  if (!admin) return;
  await db.transaction(async (tx) => {
    const existing = await findUserByLogin(tx.orm, admin.email);
    const account = existing ?? (await createUser(tx.orm, { ...admin, isVerified: true }));
    if (existing) await setPassword(tx.orm, existing.id, admin.password);
    await grantGlobalRole(tx.orm, account.id, "balena_admin");
    log.info(`Platform administrator ${admin.email} ${existing ? "password reset" : "created"}`);
  });
}
