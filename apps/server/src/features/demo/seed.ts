import crypto from "node:crypto";
import { DEFAULT_DEVICE_TYPE, type ReleasePolicy } from "@flotilla/domain";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.ts";
import type { Database, Tx } from "../../db/index.ts";
import { runBuild } from "../releases/builder.ts";
import { followLatestRelease } from "../releases/queries.ts";
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
 * that member. It owns the fleet `demo-fleet` (with two releases and a release policy) and the block
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
}

/** The demo's releases of `demo-fleet`, v1.0.0 then v1.1.0 (a third service), built by the release builder. */
const DEMO_RELEASES = [
  {
    version: "1.0.0",
    compose: `services:
  main:
    image: nginx:1.27-alpine
    ports: ["80:80"]
    labels: { io.balena.features.supervisor-api: "1" }
  worker:
    image: alpine:3.20
    command: ["sh", "-c", "while true; do date; sleep 60; done"]
    environment: [MODE=batch]
`,
  },
  {
    version: "1.1.0",
    compose: `services:
  main:
    image: nginx:1.27-alpine
    ports: ["80:80"]
    labels: { io.balena.features.supervisor-api: "1" }
  worker:
    image: alpine:3.20
    command: ["sh", "-c", "while true; do date; sleep 30; done"]
    environment: [MODE=stream]
  metrics:
    image: prom/node-exporter:v1.8.2
    network_mode: host
volumes:
  data: {}
`,
  },
];

/** Builds the demo releases through the builder (as `flotilla push` would); the fleet tracks the latest. */
async function seedDemoReleases(tx: Tx, log: FastifyBaseLogger, creator: User, withDevices: boolean) {
  const { rows: fleets } = await tx.query<{ id: number }>(
    `SELECT a.id FROM "application" a JOIN "organization" o ON o.id = a.organization
      WHERE a.app_name = $1 AND o.handle = 'demo'`,
    [DEMO_FLEET],
  );
  const fleet = Number(fleets[0]?.id);
  for (const [index, { version, compose }] of DEMO_RELEASES.entries()) {
    const files = new Map([
      ["docker-compose.yml", compose],
      ["balena.yml", `version: ${version}`],
    ]);
    const built = await runBuild(tx, log, { fleet, user: creator.id, files, draft: false, note: undefined }, () => {});
    // One transaction stamps both with the same time: the older release is dated a day back.
    const age = DEMO_RELEASES.length - 1 - index;
    await tx.query(
      `UPDATE "release" SET created_at = created_at - $2 * interval '1 day', start_timestamp = start_timestamp - $2 * interval '1 day',
              update_timestamp = update_timestamp - $2 * interval '1 day', end_timestamp = end_timestamp - $2 * interval '1 day'
        WHERE id = $1`,
      [built.id, age],
    );
  }
  await followLatestRelease(tx, [fleet]);
  if (!withDevices) return;
  // With simulated devices, a release policy (docs/rollouts.md): the next release pushed to the
  // demo fleet rolls out in waves, the canary device (simulated-devices.ts tags one), half of the
  // rest, then the rest.
  await tx.query(`INSERT INTO "release_policy" (application, policy) VALUES ($1, $2)`, [
    fleet,
    JSON.stringify(DEMO_RELEASE_POLICY),
  ]);
}

export const DEMO_RELEASE_POLICY: ReleasePolicy = {
  waves: [
    { name: "canary", selector: { type: "tag", key: "canary", value: "yes" }, ...demoGates(20) },
    { name: "half", selector: { type: "share" }, size: { percent: 50 }, ...demoGates(20) },
    { name: "rest", selector: { type: "share" }, ...demoGates(0) },
  ],
  rollback_on_halt: true,
};

function demoGates(soak: number) {
  return { soak_seconds: soak, timeout_seconds: 600, healthy_share: 1, halt_failure_ratio: 0 };
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
    await seedDemoReleases(tx, log, demo, config.demoDevices > 0);
    log.info(
      { highlight: true },
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
