import type { AdminUser, AdminUsersPage, GlobalRole } from "@flotilla/domain";
import type { Database, Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { type AuditActor, recordAudit } from "../audit/record.ts";

/**
 * Platform staff's global roles (spec 1 §3 "global roles platform administrator and
 * support_agent", §6.1; docs/support.md "Platform staff"): who holds them, and granting and
 * removing them, from the dashboard (Admin → Users) and from the server host
 * (`flotilla-server admin`). Every change is audited in its own transaction; the last platform
 * administrator (`balena_admin`) is never removed.
 */

type Q = Pick<Queryable, "query">;

type UserRow = {
  id: number;
  username: string;
  email: string | null;
  is_verified: boolean;
  created_at: Date | string;
  last_sign_in_at: Date | string | null;
  global_roles: string[] | null;
};

const USER_COLUMNS = `u.id, u.username, u.email, u.is_verified, u.created_at,
  (SELECT max(e.created_at) FROM "audit_event" e
    WHERE e.action = 'sign_in.succeeded' AND e.target_user = u.id) AS last_sign_in_at,
  (SELECT array_agg(r.name ORDER BY r.name) FROM "user__has__role" h JOIN "role" r ON r.id = h.role
    WHERE h."user" = u.id AND r.name IN ('balena_admin', 'support_agent')) AS global_roles`;

/** The expression the trigram index of migration 0031 is built on: a search matches either. */
const SEARCHED = `(lower(u.username) || ' ' || lower(coalesce(u.email, '')))`;

const iso = (value: Date | string) => new Date(value).toISOString();

function adminUser(row: UserRow): AdminUser {
  return {
    id: Number(row.id),
    username: row.username,
    email: row.email,
    is_verified: Boolean(row.is_verified),
    created_at: iso(row.created_at),
    last_sign_in_at: row.last_sign_in_at === null ? null : iso(row.last_sign_in_at),
    global_roles: (row.global_roles ?? []) as GlobalRole[],
  };
}

/** `any`: users holding either global role. */
export type RoleFilter = GlobalRole | "any";

/**
 * One page of users, by username: those whose username or email contains `search`
 * (case-insensitive), holding `role` when given; `total` counts every match.
 */
export async function listUsers(
  db: Q,
  query: { search?: string | undefined; role?: RoleFilter | undefined; limit: number; offset: number },
): Promise<AdminUsersPage> {
  const needle = query.search?.trim().toLowerCase();
  const pattern = needle ? `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const roles =
    query.role === undefined ? null : query.role === "any" ? ["balena_admin", "support_agent"] : [query.role];
  const where = `($1::text IS NULL OR ${SEARCHED} LIKE $1)
    AND ($2::text[] IS NULL OR EXISTS (SELECT 1 FROM "user__has__role" h JOIN "role" r ON r.id = h.role
                                        WHERE h."user" = u.id AND r.name = ANY($2::text[])))`;
  const [page, counted, holders] = await Promise.all([
    db.query<UserRow>(
      `SELECT ${USER_COLUMNS} FROM "user" u WHERE ${where} ORDER BY lower(u.username), u.id LIMIT $3 OFFSET $4`,
      [pattern, roles, query.limit, query.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "user" u WHERE ${where}`, [pattern, roles]),
    db.query<{ name: string; n: number }>(
      `SELECT r.name, count(h.id)::int AS n FROM "role" r LEFT JOIN "user__has__role" h ON h.role = r.id
        WHERE r.name IN ('balena_admin', 'support_agent') GROUP BY r.name`,
    ),
  ]);
  const role_counts: Record<GlobalRole, number> = { balena_admin: 0, support_agent: 0 };
  for (const row of holders.rows) role_counts[row.name as GlobalRole] = Number(row.n);
  return { users: page.rows.map(adminUser), total: Number(counted.rows[0]?.n ?? 0), role_counts };
}

export async function adminUserById(db: Q, id: number): Promise<AdminUser | undefined> {
  const { rows } = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM "user" u WHERE u.id = $1`, [id]);
  return rows[0] ? adminUser(rows[0]) : undefined;
}

/** The user named by username or email (case-insensitive), as the login form takes either. */
export async function adminUserByLogin(db: Q, login: string): Promise<AdminUser | undefined> {
  const needle = login.trim().toLowerCase();
  const { rows } = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM "user" u WHERE lower(u.email) = $1 OR lower(u.username) = $1
      ORDER BY (lower(u.username) = $1) DESC LIMIT 1`,
    [needle],
  );
  return rows[0] ? adminUser(rows[0]) : undefined;
}

/** Where a change was made: the API (the dashboard) or the command on the server host. */
export type RoleChangeSource = "api" | "server_host";

export type RoleChange = { user: AdminUser; role: GlobalRole; changed: boolean };

/**
 * Grants (`grant: true`) or removes a global role of a user, in one transaction: the role's row
 * is locked, so two removals of `balena_admin` cannot both see another administrator and leave
 * none. Granting a role held, or removing one not held, changes nothing and records nothing.
 */
export async function changeGlobalRole(
  db: Database,
  change: {
    user: number;
    role: GlobalRole;
    grant: boolean;
    actor: AuditActor | undefined;
    source: RoleChangeSource;
    /** The operating-system account that ran the command on the server host. */
    hostUser?: string | undefined;
  },
): Promise<RoleChange> {
  return db.transaction(async (tx) => {
    const target = await adminUserById(tx, change.user);
    if (!target) throw new FlotillaError("not_found", "User not found");
    await tx.query(`INSERT INTO "role" (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [change.role]);
    const { rows: roleRows } = await tx.query<{ id: number }>(`SELECT id FROM "role" WHERE name = $1 FOR UPDATE`, [
      change.role,
    ]);
    const roleId = Number(roleRows[0]?.id);
    let changed: boolean;
    if (change.grant) {
      const { rows } = await tx.query(
        `INSERT INTO "user__has__role" ("user", role) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id`,
        [target.id, roleId],
      );
      changed = rows.length > 0;
    } else {
      if (change.role === "balena_admin" && target.global_roles.includes("balena_admin")) {
        const { rows } = await tx.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "user__has__role" WHERE role = $1`,
          [roleId],
        );
        if (Number(rows[0]?.n ?? 0) <= 1) {
          throw new FlotillaError("last_platform_admin", undefined, { params: { username: target.username } });
        }
      }
      const { rows } = await tx.query(`DELETE FROM "user__has__role" WHERE "user" = $1 AND role = $2 RETURNING id`, [
        target.id,
        roleId,
      ]);
      changed = rows.length > 0;
    }
    if (changed) {
      await recordAudit(tx, change.actor, {
        action: change.grant ? "global_role.granted" : "global_role.revoked",
        targetType: "user",
        targetId: target.id,
        targetUser: target.id,
        details: {
          role: change.role,
          username: target.username,
          ...(change.source === "server_host"
            ? { from: "server host", ...(change.hostUser ? { host_user: change.hostUser } : {}) }
            : {}),
        },
      });
    }
    const user = (await adminUserById(tx, target.id)) ?? target;
    return { user, role: change.role, changed };
  });
}
