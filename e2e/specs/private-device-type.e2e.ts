import { mkdirSync } from "node:fs";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabaseUrl, type RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api } from "./fleets-helpers.ts";

/**
 * A fleet whose device type the viewer can no longer read (DEV-017): the operator made a device
 * type private and gave the demo organization access to it (device types are the operator's, in
 * the database), the organization created a fleet of that type, then the operator withdrew the
 * access. The fleet stays readable; its device type does not, and the add-device dialog says so.
 */
describe("a fleet of a private device type the organization lost access to", () => {
  let flotilla: RunningFlotilla;
  let db: pg.Client;
  let browser: Browser;
  let page: Page;
  let fleet = 0;

  beforeAll(async () => {
    const databaseUrl = await freshDatabaseUrl();
    ({ flotilla, browser, page } = await startDemoSession(0, {}, { DATABASE_URL: databaseUrl }));
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const { rows } = await db.query<{ type: number; organization: number }>(
      `INSERT INTO "device_type" (slug, name, is_of__cpu_architecture, logo, contract, belongs_to__device_family, is_private)
       SELECT 'acme-gateway', 'Acme Gateway', is_of__cpu_architecture, logo, contract, belongs_to__device_family, true
         FROM "device_type" WHERE slug = 'raspberrypi4-64'
       RETURNING id AS type, (SELECT organization FROM "application" WHERE app_name = 'demo-fleet') AS organization`,
    );
    const { type, organization } = rows[0] as { type: number; organization: number };
    await db.query(
      `INSERT INTO "organization_has_private_access_to_device_type" (organization, has_private_access_to__device_type)
       VALUES ($1, $2)`,
      [organization, type],
    );
    const created = await api<{ id: number }>(page, flotilla.apiUrl, "POST", "/v7/application", {
      app_name: "acme-fleet",
      organization,
      is_for__device_type: type,
    });
    fleet = created.id;
    // The operator withdraws the organization's access to the type.
    await db.query(
      `DELETE FROM "organization_has_private_access_to_device_type" WHERE has_private_access_to__device_type = $1`,
      [type],
    );
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await browser?.close();
    await flotilla?.stop();
  });

  it("still opens the fleet, and the add-device dialog says it could not detect the device type", async () => {
    const readable = await api<{ d: Array<{ slug: string }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/device_type?$select=slug&$filter=slug eq 'acme-gateway'",
    );
    expect(readable.d).toEqual([]);
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleet}/devices`);
    await page.getByText("The devices of acme-fleet.").waitFor();
    await page.getByRole("button", { name: "Add device" }).first().click();
    const dialog = page.getByRole("dialog", { name: /Add a device to/ });
    await dialog.getByRole("alert").filter({ hasText: "Could not detect the device type." }).waitFor();
    mkdirSync("/tmp/shots-private-device-type", { recursive: true });
    await page.screenshot({ path: "/tmp/shots-private-device-type/add-device-type-not-detected.png" });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
  });
});
