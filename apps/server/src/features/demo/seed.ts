import crypto from "node:crypto";
import { DEFAULT_DEVICE_TYPE } from "@flotilla/domain";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.ts";
import type { Database, Tx } from "../../db/index.ts";
import { hashPassword } from "../users/passwords.ts";
import { createUser, findUserByLogin, grantGlobalRole, setPassword, type User } from "../users/service.ts";

export const DEMO_EMAIL = "demo@example.com";
export const DEMO_MEMBER_EMAIL = "demo-member@example.com";
export const DEMO_ORGANIZATION = "Demo";
export const DEMO_TEAM = "Operators";
export const DEMO_FLEET = "demo-fleet";
export const DEMO_BLOCK = "demo-block";

/**
 * The demo's organization "Demo" (handle `demo`): the demo account administers it, a second
 * account (`demo-member@example.com`, same password) is a member, and the team "Operators" holds
 * that member. It owns the fleet `demo-fleet` (with a release of two services) and the block
 * `demo-block`, both for raspberrypi4-64.
 */
async function seedDemoOrganization(tx: Tx, demo: User, member: User) {
  const { rows: orgs } = await tx.query<{ id: number }>(
    `INSERT INTO "organization" (name, handle) VALUES ($1, $2) RETURNING id`,
    [DEMO_ORGANIZATION, "demo"],
  );
  const org = orgs[0]?.id;
  await tx.query(
    `INSERT INTO "organization_membership" ("user", is_member_of__organization, organization_membership_role)
     SELECT $1::int, $3::int, r.id FROM "organization_membership_role" r WHERE r.name = 'administrator'
     UNION ALL SELECT $2::int, $3::int, r.id FROM "organization_membership_role" r WHERE r.name = 'member'`,
    [demo.id, member.id, org],
  );
  const { rows: teams } = await tx.query<{ id: number }>(
    `INSERT INTO "team" (belongs_to__organization, name) VALUES ($1, $2) RETURNING id`,
    [org, DEMO_TEAM],
  );
  await tx.query(`INSERT INTO "team_membership" ("user", is_member_of__team) VALUES ($1, $2)`, [
    member.id,
    teams[0]?.id,
  ]);
  for (const [name, applicationClass] of [
    [DEMO_FLEET, "fleet"],
    [DEMO_BLOCK, "block"],
  ] as const) {
    await tx.query(
      `WITH new_actor AS (INSERT INTO "actor" DEFAULT VALUES RETURNING id)
       INSERT INTO "application" (actor, uuid, is_of__class, organization, app_name, slug, is_for__device_type, application_type)
       SELECT new_actor.id, $1, $2, $3, $4, $5, dt.id, at.id
         FROM new_actor, "device_type" dt, "application_type" at
        WHERE dt.slug = $6 AND at.slug = 'microservices'`,
      [crypto.randomBytes(16).toString("hex"), applicationClass, org, name, `demo/${name}`, DEFAULT_DEVICE_TYPE],
    );
  }
  await seedDemoRelease(tx);
}

/** The demo's release of `demo-fleet`: v1.0.0 with the services `main` and `worker`, the fleet's target. */
async function seedDemoRelease(tx: Tx) {
  const { rows: fleets } = await tx.query<{ id: number }>(
    `SELECT a.id FROM "application" a JOIN "organization" o ON o.id = a.organization
      WHERE a.app_name = $1 AND o.handle = 'demo'`,
    [DEMO_FLEET],
  );
  const fleetId = fleets[0]?.id;
  const services = ["main", "worker"];
  const composition = { services: Object.fromEntries(services.map((name) => [name, { build: `./${name}` }])) };
  const { rows: releases } = await tx.query<{ id: number }>(
    `INSERT INTO "release" (belongs_to__application, commit, status, composition, semver_major, end_timestamp,
       is_final, is_finalized_at__date, release_version)
     VALUES ($1, $2, 'success', $3, 1, now(), true, now(), 'v1.0.0') RETURNING id`,
    [fleetId, crypto.randomBytes(16).toString("hex"), JSON.stringify(composition)],
  );
  const releaseId = releases[0]?.id;
  for (const name of services) {
    await tx.query(
      `WITH s AS (INSERT INTO "service" (application, service_name) VALUES ($1, $2) RETURNING id),
            i AS (INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status, end_timestamp, image_size)
                  SELECT s.id, $3, 'success', now(), 52428800 FROM s RETURNING id)
       INSERT INTO "release_image" (image, is_part_of__release) SELECT i.id, $4 FROM i`,
      [fleetId, name, `registry.flotilla.local/demo/${DEMO_FLEET}/${name}`, releaseId],
    );
  }
  await tx.query(`UPDATE "application" SET should_be_running__release = $2 WHERE id = $1`, [fleetId, releaseId]);
}

/**
 * On a fresh database (the first migration ran in this start) with the demo on, creates the demo
 * account with its organization "Demo" (a second member and a team). The password (of both
 * accounts) is FLOTILLA_DEMO_PASSWORD, or a generated one printed once in the log.
 */
export async function seedDemo(db: Database, config: Config, log: FastifyBaseLogger, freshDatabase: boolean) {
  if (!config.demo || !freshDatabase) return;
  const password = config.demoPassword ?? crypto.randomBytes(9).toString("base64url");
  // Hashed before the transaction: argon2 holds no connection.
  const passwordHash = await hashPassword(password);
  await db.transaction(async (tx) => {
    if (await findUserByLogin(tx.orm, DEMO_EMAIL)) return;
    const demo = await createUser(tx.orm, {
      email: DEMO_EMAIL,
      username: "demo",
      password,
      passwordHash,
      isVerified: true,
    });
    const member = await createUser(tx.orm, {
      email: DEMO_MEMBER_EMAIL,
      username: "demo-member",
      password,
      passwordHash,
      isVerified: true,
    });
    await seedDemoOrganization(tx, demo, member);
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
