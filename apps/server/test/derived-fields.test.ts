import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/index.ts";
import { permissionsForUser } from "../src/features/data-api/permissions.ts";
import type { User } from "../src/features/users/service.ts";
import { model } from "../src/model/index.ts";
import { createPermissions, handleODataRequest } from "../src/odata/index.ts";
import { createFactories, type Factories } from "./factories.ts";
import { createTestDatabase } from "./harness.ts";

/**
 * The fields the spec lists that are derived rather than stored (spec 1 §3, spec 2 §3, spec 3 §3),
 * read through the data API as a signed-in user.
 */
let db: Database;
let drop: () => Promise<void>;
let make: Factories;
beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
  make = createFactories(db.orm);
});
afterAll(() => drop());

type Row = Record<string, unknown>;

async function get(as: User, url: string): Promise<Row[]> {
  const response = await handleODataRequest({
    db,
    model,
    permissions: createPermissions({ model, permissions: permissionsForUser(), actorId: as.actor }),
    actorId: as.actor,
    method: "GET",
    url,
  });
  return (response.body as { d: Row[] }).d;
}

describe("derived fields", () => {
  it("counts a fleet's devices, in total and per overall status, only when asked", async () => {
    const admin = await make.user();
    const org = await make.organization({ admins: [admin] });
    const fleet = await make.fleet(org);
    const empty = await make.fleet(org);
    const [a, b] = [await make.device(fleet), await make.device(fleet), await make.device(fleet)];
    await db.query(
      `UPDATE device SET last_connectivity_event = now(), api_heartbeat_state = 'online', is_connected_to_vpn = true WHERE id IN ($1, $2)`,
      [a?.id, b?.id],
    );
    await db.query("UPDATE device SET is_active = false WHERE id = $1", [b?.id]);
    const url = `/application?$select=id,total_devices,device_count_grouped_by_status&$orderby=id asc&$filter=id in (${fleet.id}, ${empty.id})`;
    expect(await get(admin, url)).toEqual([
      {
        id: fleet.id,
        total_devices: 3,
        device_count_grouped_by_status: { operational: 1, inactive: 2 },
      },
      { id: empty.id, total_devices: 0, device_count_grouped_by_status: {} },
    ]);
    const [plain] = await get(admin, `/application(${fleet.id})`);
    expect(plain).not.toHaveProperty("total_devices");
  });

  it("shows the caller's own roles on a fleet as user_access_roles", async () => {
    const [admin, observer] = [await make.user(), await make.user()];
    const org = await make.organization({ admins: [admin], members: [observer] });
    const fleet = await make.fleet(org);
    await make.fleetMember(observer, fleet, "observer");
    const url = `/application(${fleet.id})?$select=id&$expand=user_access_roles($select=role)`;
    expect(await get(observer, url)).toEqual([{ id: fleet.id, user_access_roles: [{ role: "observer" }] }]);
    expect(await get(admin, url)).toEqual([{ id: fleet.id, user_access_roles: [{ role: "administrator" }] }]);
  });

  it("derives a member's seat from the strongest role they hold in the organization", async () => {
    const [admin, developer, observer, member] = [
      await make.user(),
      await make.user(),
      await make.user(),
      await make.user(),
    ];
    const org = await make.organization({ admins: [admin], members: [developer, observer, member] });
    const [one, two] = [await make.fleet(org), await make.fleet(org)];
    await make.fleetMember(developer, one, "observer");
    await make.team(org, { members: [developer], fleets: [{ fleet: two, role: "developer" }] });
    await make.team(org, { members: [observer], fleets: [{ fleet: one, role: "observer" }] });
    const seats = await get(
      admin,
      `/organization_membership?$select=user,effective_seat_role&$filter=is_member_of__organization eq ${org.id}&$orderby=id asc`,
    );
    expect(seats.map((row) => row.effective_seat_role)).toEqual(["administrator", "developer", "observer", "member"]);
  });

  it("tells whether a device is in local mode from its configuration variable", async () => {
    const admin = await make.user();
    const fleet = await make.fleet(await make.organization({ admins: [admin] }));
    const [local, remote] = [await make.device(fleet), await make.device(fleet)];
    await db.query(
      "INSERT INTO device_config_variable (device, name, value) VALUES ($1, 'RESIN_SUPERVISOR_LOCAL_MODE', '1'), ($2, 'RESIN_SUPERVISOR_LOCAL_MODE', '0')",
      [local?.id, remote?.id],
    );
    const rows = await get(admin, `/device?$select=id,is_in_local_mode&$filter=belongs_to__application eq ${fleet.id}`);
    expect(rows).toEqual(
      expect.arrayContaining([
        { id: local?.id, is_in_local_mode: true },
        { id: remote?.id, is_in_local_mode: false },
      ]),
    );
    expect(await get(admin, `/device?$select=id&$filter=is_in_local_mode eq true`)).toEqual([{ id: local?.id }]);
  });

  it("links a device type to its host-OS fleets and shows the user's newsletter and password flags", async () => {
    const admin = await make.user();
    const org = await make.organization({ admins: [admin] });
    const host = await make.fleet(org, { deviceType: "raspberrypi4-64" });
    await make.fleet(org, { deviceType: "raspberrypi4-64" });
    await db.query("UPDATE application SET is_host = true WHERE id = $1", [host.id]);
    const [deviceType] = await get(
      admin,
      `/device_type(slug='raspberrypi4-64')?$select=slug&$expand=is_default_for__application($select=id)`,
    );
    // The user's own host fleet next to the catalogue's public host-OS fleets (balena_os/…).
    expect(deviceType?.slug).toBe("raspberrypi4-64");
    const hostFleets = ((deviceType?.is_default_for__application ?? []) as Array<{ id: number }>).map((app) => app.id);
    expect(hostFleets).toContain(host.id);
    const catalogue = await db.query<{ id: number }>(
      `SELECT a.id FROM application a JOIN device_type dt ON dt.id = a.is_for__device_type
        WHERE a.is_host AND a.slug LIKE 'balena_os/%' AND dt.slug = 'raspberrypi4-64'`,
    );
    expect(catalogue.rows.length).toBeGreaterThan(0);
    expect(hostFleets.sort((a, b) => a - b)).toEqual(
      [host.id, ...catalogue.rows.map((row) => row.id)].sort((a, b) => a - b),
    );
    await db.query('UPDATE "user" SET has_disabled_newsletter = true WHERE id = $1', [admin.id]);
    expect(
      await get(admin, `/user(${admin.id})?$select=has_disabled_newsletter,has_enabled_newsletter,has_password_set`),
    ).toEqual([{ has_disabled_newsletter: true, has_enabled_newsletter: false, has_password_set: true }]);
  });
});
