import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/index.ts";
import { mayDo, requireAction } from "../src/features/data-api/actions.ts";
import type { User } from "../src/features/users/service.ts";
import type { Caller } from "../src/lib/authenticate.ts";
import { createFactories, type Factories } from "./factories.ts";
import { createTestDatabase } from "./harness.ts";

/** Custom actions (spec 2 §6 device action permissions, spec 3 §6) through the role tables. */
let db: Database;
let drop: () => Promise<void>;
let make: Factories;
beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
  make = createFactories(db.orm);
});
afterAll(() => drop());

const callerOf = (user: User, globalRoles: string[] = []): Caller => ({
  actor: user.actor,
  user: { id: user.id, username: user.username, email: user.email },
  globalRoles,
  session: undefined,
  apiKey: undefined,
});

describe("custom actions", () => {
  it("gives device actions by fleet role, merged across membership and teams", async () => {
    const people = {
      admin: await make.user(),
      observer: await make.user(),
      safeOperator: await make.user(),
      operator: await make.user(),
      safeDeveloper: await make.user(),
      viaTeam: await make.user(),
      stranger: await make.user(),
      support: await make.user(),
    };
    const org = await make.organization({
      admins: [people.admin],
      members: [people.observer, people.safeOperator, people.operator, people.safeDeveloper, people.viaTeam],
    });
    const fleet = await make.fleet(org);
    const device = await make.device(fleet);
    await make.fleetMember(people.observer, fleet, "observer");
    await make.fleetMember(people.safeOperator, fleet, "safe-operator");
    await make.fleetMember(people.operator, fleet, "operator");
    await make.fleetMember(people.safeDeveloper, fleet, "safe-developer");
    await make.fleetMember(people.viaTeam, fleet, "observer");
    await make.team(org, { members: [people.viaTeam], fleets: [{ fleet, role: "operator" }] });

    const may = async (who: keyof typeof people, permission: string, globalRoles: string[] = []) =>
      mayDo(db, callerOf(people[who], globalRoles), permission, { device: device.id });
    const table: [keyof typeof people, string, boolean][] = [
      ["admin", "device.supervisor-proxy-write", true],
      ["observer", "device.supervisor-proxy-write", false],
      ["observer", "device.ssh", false],
      ["safeOperator", "device.ssh", true],
      ["safeOperator", "device.actions-proxy-hup", true],
      ["safeOperator", "device.supervisor-proxy-write", false],
      ["safeOperator", "device.move", false],
      ["operator", "device.supervisor-proxy-write", true],
      ["operator", "device.actions-proxy-supervisorupgrade", true],
      ["safeDeveloper", "device.delete", false],
      ["safeDeveloper", "device.move", true],
      // An observer membership and an operator team: the stronger role counts.
      ["viaTeam", "device.supervisor-proxy-write", true],
      ["stranger", "device.ssh", false],
    ];
    for (const [who, permission, expected] of table) {
      expect(await may(who, permission), `${who} ${permission}`).toBe(expected);
    }
    // Platform staff only where support access is granted, on the fleet or on the device.
    const grant = (table: "application" | "device", id: number, until: string) =>
      db.query(`UPDATE "${table}" SET is_accessible_by_support_until__date = now() + $2::interval WHERE id = $1`, [
        id,
        until,
      ]);
    expect(await may("support", "device.ssh", ["support_agent"])).toBe(false);
    expect(await may("support", "device.access_diagnostics", ["balena_admin"])).toBe(false);
    await grant("application", fleet.id, "1 day");
    expect(await may("support", "device.ssh", ["support_agent"])).toBe(true);
    expect(await may("support", "device.access_diagnostics", ["balena_admin"])).toBe(true);
    expect(await may("support", "device.supervisor-proxy-write", ["support_agent"])).toBe(false);
    await grant("application", fleet.id, "-1 minute");
    expect(await may("support", "device.ssh", ["support_agent"])).toBe(false);
    await grant("device", device.id, "1 day");
    expect(await may("support", "device.access_diagnostics", ["support_agent"])).toBe(true);
    await grant("device", device.id, "-1 minute");
    expect(await mayDo(db, callerOf(people.operator), "application.deactivate-device", { fleet: fleet.id })).toBe(true);
    expect(await mayDo(db, callerOf(people.operator), "application.transfer", { fleet: fleet.id })).toBe(false);
    expect(await mayDo(db, callerOf(people.admin), "application.transfer", { fleet: fleet.id })).toBe(true);
    await expect(
      requireAction(db, callerOf(people.stranger), "device.ssh", { device: device.id }),
    ).rejects.toMatchObject({ code: "forbidden", statusCode: 403 });
  });

  it("gives organization keys to administrators, and deletion to a sole administrator only", async () => {
    const [first, second, member] = [await make.user(), await make.user(), await make.user()];
    const org = await make.organization({ admins: [first], members: [member] });
    const may = (user: User, permission: string) => mayDo(db, callerOf(user), permission, { organization: org.id });
    expect(await may(first, "organization.access_billing")).toBe(true);
    expect(await may(first, "team.update")).toBe(true);
    expect(await may(member, "organization.access_billing")).toBe(false);
    expect(await may(member, "application.create")).toBe(false);
    expect(await may(second, "organization.update")).toBe(false);
    expect(await may(first, "organization.delete")).toBe(true);
    const shared = await make.organization({ admins: [first, second] });
    expect(await mayDo(db, callerOf(first), "organization.delete", { organization: shared.id })).toBe(false);
    expect(
      await mayDo(db, callerOf(member, ["balena_admin"]), "organization.delete", { organization: shared.id }),
    ).toBe(true);
  });
});
