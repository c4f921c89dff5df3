import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/index.ts";
import { createFactories } from "./factories.ts";
import { createTestDatabase } from "./harness.ts";

let db: Database;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
});
afterAll(() => drop());

const rolesOn = async (fleetId: number, actorId: number) =>
  (
    await db.query<{ role: string }>(
      "SELECT role FROM fleet_access WHERE application = $1 AND actor = $2 ORDER BY role",
      [fleetId, actorId],
    )
  ).rows.map((r) => r.role);

describe("fleet roles (spec 2 §6: organization, direct membership and teams, merged)", () => {
  it("makes organization administrators fleet administrators, and plain members nothing", async () => {
    const make = createFactories(db.orm);
    const [admin, member] = [await make.user(), await make.user()];
    const org = await make.organization({ admins: [admin], members: [member] });
    const fleet = await make.fleet(org);
    expect(await rolesOn(fleet.id, admin.actor)).toEqual(["administrator"]);
    expect(await rolesOn(fleet.id, member.actor)).toEqual([]);
  });

  it("adds direct fleet membership and team access roles", async () => {
    const make = createFactories(db.orm);
    const [owner, someone] = [await make.user(), await make.user()];
    const org = await make.organization({ admins: [owner], members: [someone] });
    const [fleet, other] = [await make.fleet(org), await make.fleet(org)];
    await make.fleetMember(someone, fleet, "observer");
    await make.team(org, { members: [someone], fleets: [{ fleet, role: "developer" }] });
    expect(await rolesOn(fleet.id, someone.actor)).toEqual(["developer", "observer"]);
    expect(await rolesOn(other.id, someone.actor)).toEqual([]);
  });
});
