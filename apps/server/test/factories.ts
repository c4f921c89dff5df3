import crypto from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { Orm } from "../src/db/index.ts";
import {
  actor,
  application,
  application_membership_role,
  application_type,
  device,
  device_type,
  organization,
  organization_membership,
  organization_membership_role,
  release,
  team,
  team_application_access,
  team_membership,
  user_application_membership,
} from "../src/db/schema/index.ts";
import { createUser, type User } from "../src/features/users/service.ts";

/**
 * Test data built straight into the tables (not through the API under test): users,
 * organizations, fleets, devices, and the memberships that give roles.
 */
export function createFactories(orm: Orm) {
  let sequence = 0;
  const next = () => {
    sequence += 1;
    return `${sequence}-${crypto.randomBytes(3).toString("hex")}`;
  };
  const newActor = async () => {
    const [row] = await orm.insert(actor).values({}).returning({ id: actor.id });
    if (!row) throw new Error("actor insert returned nothing");
    return row.id;
  };
  const idOf = async (rows: Promise<{ id: number }[]>) => {
    const [row] = await rows;
    if (!row) throw new Error("lookup returned nothing");
    return row.id;
  };
  const fleetRoleId = (name: string) =>
    idOf(
      orm
        .select({ id: application_membership_role.id })
        .from(application_membership_role)
        .where(eq(application_membership_role.name, name)),
    );

  return {
    async user(overrides: { email?: string; password?: string; username?: string } = {}): Promise<User> {
      const email = overrides.email ?? `user-${next()}@example.com`;
      return createUser(orm, {
        email,
        password: overrides.password ?? "correct-horse-battery",
        isVerified: true,
        ...overrides,
      });
    },

    /** An organization with its administrators and members, on the free plan unless `plan` names another. */
    async organization(options: { name?: string; admins?: User[]; members?: User[]; plan?: string } = {}) {
      const name = options.name ?? `Org ${next()}`;
      const [org] = await orm
        .insert(organization)
        .values({ name, handle: name.toLowerCase().replace(/[^a-z0-9_-]+/g, "_") })
        .returning();
      if (!org) throw new Error("organization insert returned nothing");
      const roleId = (roleName: string) =>
        idOf(
          orm
            .select({ id: organization_membership_role.id })
            .from(organization_membership_role)
            .where(eq(organization_membership_role.name, roleName)),
        );
      for (const [users, roleName] of [
        [options.admins ?? [], "administrator"],
        [options.members ?? [], "member"],
      ] as const) {
        for (const u of users) {
          await orm.insert(organization_membership).values({
            user: u.id,
            is_member_of__organization: org.id,
            organization_membership_role: await roleId(roleName),
          });
        }
      }
      if (options.plan) {
        await orm.execute(
          sql`INSERT INTO "subscription" (is_for__organization, is_for__plan, billing_cycle)
              SELECT ${org.id}, id, 'monthly' FROM "plan" WHERE billing_code = ${options.plan}`,
        );
      }
      return org;
    },

    async fleet(
      org: { id: number; handle: string },
      options: { name?: string; deviceType?: string; className?: "fleet" | "app" | "block" } = {},
    ) {
      const name = options.name ?? `fleet-${next()}`;
      const deviceTypeId = await idOf(
        orm
          .select({ id: device_type.id })
          .from(device_type)
          .where(eq(device_type.slug, options.deviceType ?? "raspberrypi4-64")),
      );
      const typeId = await idOf(
        orm
          .select({ id: application_type.id })
          .from(application_type)
          .where(eq(application_type.slug, "microservices")),
      );
      const [fleet] = await orm
        .insert(application)
        .values({
          actor: await newActor(),
          uuid: crypto.randomBytes(16).toString("hex"),
          is_of__class: options.className ?? "fleet",
          organization: org.id,
          app_name: name,
          slug: `${org.handle}/${name}`.toLowerCase(),
          is_for__device_type: deviceTypeId,
          application_type: typeId,
        })
        .returning();
      if (!fleet) throw new Error("application insert returned nothing");
      return fleet;
    },

    async device(fleet: { id: number; is_for__device_type: number }, options: { name?: string } = {}) {
      const [row] = await orm
        .insert(device)
        .values({
          actor: await newActor(),
          uuid: crypto.randomBytes(16).toString("hex"),
          device_name: options.name ?? `device-${next()}`,
          belongs_to__application: fleet.id,
          is_of__device_type: fleet.is_for__device_type,
        })
        .returning();
      if (!row) throw new Error("device insert returned nothing");
      return row;
    },

    /** A release of a fleet (a finished build unless `status` says otherwise). */
    async release(
      fleet: { id: number },
      options: { commit?: string; status?: string; semver?: [number, number, number] } = {},
    ) {
      const [major, minor, patch] = options.semver ?? [1, 0, 0];
      const [row] = await orm
        .insert(release)
        .values({
          belongs_to__application: fleet.id,
          commit: options.commit ?? crypto.randomBytes(16).toString("hex"),
          status: options.status ?? "success",
          semver_major: major,
          semver_minor: minor,
          semver_patch: patch,
          end_timestamp: new Date(),
          is_final: (options.status ?? "success") === "success",
          is_finalized_at__date: (options.status ?? "success") === "success" ? new Date() : null,
        })
        .returning();
      if (!row) throw new Error("release insert returned nothing");
      return row;
    },

    /** A direct fleet membership with a role (observer … developer). */
    async fleetMember(u: User, fleet: { id: number }, role: string) {
      await orm.insert(user_application_membership).values({
        user: u.id,
        is_member_of__application: fleet.id,
        application_membership_role: await fleetRoleId(role),
      });
    },

    /** A team of the organization with these members and a role on these fleets. */
    async team(org: { id: number }, options: { members: User[]; fleets?: { fleet: { id: number }; role: string }[] }) {
      const [row] = await orm
        .insert(team)
        .values({ belongs_to__organization: org.id, name: `team-${next()}` })
        .returning();
      if (!row) throw new Error("team insert returned nothing");
      for (const u of options.members)
        await orm.insert(team_membership).values({ user: u.id, is_member_of__team: row.id });
      for (const { fleet, role } of options.fleets ?? []) {
        await orm.insert(team_application_access).values({
          team: row.id,
          grants_access_to__application: fleet.id,
          application_membership_role: await fleetRoleId(role),
        });
      }
      return row;
    },
  };
}

export type Factories = ReturnType<typeof createFactories>;
