import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, shot } from "./fleets-helpers.ts";

type TargetState = Record<
  string,
  { config: Record<string, string>; apps: Record<string, { releases: Record<string, unknown> }> }
>;

/**
 * Issue 8 "Done when": fleet variables added, edited and deleted in one staged batch; the spec's
 * messages for a reserved and an invalid name; the unsaved-changes warning; an override on one
 * device reaching its target state and the simulated device's logs; a variable set on three
 * devices at once.
 */
describe("variables: staged fleet edits, device overrides, bulk", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);
  const fleetVars = async () =>
    (
      await call<{ d: Array<{ name: string; value: string }> }>(
        "GET",
        `/v7/application_environment_variable?$select=name,value&$filter=application eq ${fleetId}&$orderby=name asc`,
      )
    ).d;

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(3, { viewport: { width: 1280, height: 860 } }));
    const apps = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'",
    );
    fleetId = apps.d[0]?.id ?? 0;
    await call("POST", "/v7/application_environment_variable", { application: fleetId, name: "LEVEL", value: "3" });
    await call("POST", "/v7/application_environment_variable", { application: fleetId, name: "OLD", value: "x" });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("adds, edits and deletes fleet variables in one staged batch", async () => {
    await page.goto(url(`/fleets/${fleetId}/envvars`));
    const editor = page.getByRole("region", { name: "Environment variables" });
    await editor.getByRole("row", { name: "LEVEL" }).waitFor();
    // Add
    await editor.getByRole("button", { name: "Add variable" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a variable" });
    await dialog.getByLabel("Name").fill("GREETING");
    await dialog.getByLabel("Value").fill("hello");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    // Edit
    await editor.getByRole("button", { name: "Edit LEVEL" }).click();
    await page.getByRole("dialog", { name: "Edit LEVEL" }).getByLabel("Value").fill("5");
    await page.getByRole("dialog", { name: "Edit LEVEL" }).getByRole("button", { name: "Stage change" }).click();
    // Delete
    await editor.getByRole("button", { name: "Delete OLD" }).click();
    expect(await editor.getByRole("row", { name: "GREETING" }).getAttribute("data-state")).toBe("added");
    expect(await editor.getByRole("row", { name: "LEVEL" }).getAttribute("data-state")).toBe("updated");
    await editor.getByRole("row", { name: "LEVEL" }).getByText("was 3").waitFor();
    expect(await editor.getByRole("row", { name: "OLD" }).getAttribute("data-state")).toBe("deleted");
    // Staged as deleted: delete disabled; staged as added: no delete.
    expect(await editor.getByRole("button", { name: "Delete OLD" }).isDisabled()).toBe(true);
    expect(await editor.getByRole("button", { name: "Delete GREETING" }).count()).toBe(0);
    await editor.getByText("3 unsaved changes").waitFor();
    await shot(page, "30-staged-variables");
    expect(await fleetVars()).toEqual([
      { name: "LEVEL", value: "3" },
      { name: "OLD", value: "x" },
    ]);
    await editor.getByRole("button", { name: "Apply 3 changes" }).click();
    await page.getByText("all changes successful").waitFor();
    expect(await fleetVars()).toEqual([
      { name: "GREETING", value: "hello" },
      { name: "LEVEL", value: "5" },
    ]);
  });

  it("shows the spec's messages for a reserved and an invalid name", async () => {
    const editor = page.getByRole("region", { name: "Environment variables" });
    await editor.getByRole("button", { name: "Add variable" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a variable" });
    const name = dialog.getByLabel("Name");
    await name.fill("BALENA_DEVICE_UUID");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    await dialog.getByText("This environment variable is reserved and cannot be used.").waitFor();
    await name.fill("BALENA_HOST_CONFIG_gpu_mem");
    await dialog.getByText("Configuration variables are managed through the Configuration page.").waitFor();
    await dialog
      .getByText(
        "Variables beginning with RESIN_ or BALENA_ configure OS features and must be managed on the Configuration page.",
      )
      .waitFor();
    await name.fill("9LIVES");
    await dialog.getByText("The name must start with a letter").waitFor();
    await name.fill("GREETING");
    await dialog.getByText("A variable with this name already exists").waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  it("warns before leaving with unsaved changes", async () => {
    const editor = page.getByRole("region", { name: "Environment variables" });
    await editor.getByRole("button", { name: "Delete LEVEL" }).click();
    let warned = "";
    page.once("dialog", (dialog) => {
      warned = dialog.message();
      void dialog.dismiss();
    });
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Summary" }).click();
    await expect.poll(() => warned).toBe("Changes not saved. Click OK to proceed.");
    expect(new URL(page.url()).pathname).toBe(`/fleets/${fleetId}/envvars`);
    await editor.getByRole("button", { name: "Revert all" }).click();
    await page.getByRole("dialog", { name: "Revert all changes?" }).getByRole("button", { name: "Revert all" }).click();
    expect(await editor.getByRole("row", { name: "LEVEL" }).getAttribute("data-state")).toBe("stored");
  });

  it("sets a known configuration variable with its schema's rules on the configuration page", async () => {
    await page.goto(url(`/fleets/${fleetId}/config`));
    await page
      .getByRole("region", { name: "Not set: the device type's defaults apply" })
      .getByText("BALENA_HOST_CONFIG_gpu_mem")
      .waitFor();
    const editor = page.getByRole("region", { name: "Configuration variables" });
    await editor.getByRole("button", { name: "Add variable" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a variable" });
    await dialog.getByLabel("Name").fill("GREETING");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    await dialog.getByText("Configuration variable names must begin with RESIN_ or BALENA_").waitFor();
    await dialog.getByLabel("Name").fill("BALENA_HOST_CONFIG_gpu_mem");
    await dialog.getByLabel("Value").fill("lots");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    await dialog.getByText("The value must be a whole number").waitFor();
    await dialog.getByLabel("Value").fill("128");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    await editor.getByRole("button", { name: "Apply 1 change" }).click();
    await page.getByText("all changes successful").waitFor();
    const stored = await call<{ d: Array<{ name: string; value: string }> }>(
      "GET",
      `/v7/application_config_variable?$select=name,value&$filter=application eq ${fleetId}`,
    );
    expect(stored.d).toContainEqual({ name: "BALENA_HOST_CONFIG_gpu_mem", value: "128" });
    await shot(page, "32-fleet-config");
  });

  it("overrides a fleet variable on one device and the device's target state has it", async () => {
    const devices = await call<{ d: Array<{ uuid: string; overall_status: string }> }>(
      "GET",
      `/v7/device?$select=uuid,overall_status&$filter=belongs_to__application eq ${fleetId}&$orderby=id asc`,
    );
    const uuid = devices.d[0]?.uuid ?? "";
    await page.goto(url(`/devices/${uuid}/envvars`));
    const editor = page.getByRole("region", { name: "Environment variables" });
    await editor.getByRole("row", { name: "GREETING" }).getByText("from fleet").waitFor();
    await editor.getByRole("button", { name: "Override GREETING" }).click();
    const dialog = page.getByRole("dialog", { name: "Override GREETING on this device" });
    await dialog.getByLabel("Value").fill("hola");
    await dialog.getByRole("button", { name: "Stage change" }).click();
    await editor.getByRole("button", { name: "Apply 1 change" }).click();
    await page.getByText("all changes successful").waitFor();
    await editor.getByRole("row", { name: "GREETING" }).getByText("overrides fleet").waitFor();
    await shot(page, "31-device-override");
    const state = await call<TargetState>("GET", `/device/v3/${uuid}/state`);
    expect(JSON.stringify(state[uuid])).toContain('"GREETING":"hola"');
    // The simulated device applies it and says so in its logs.
    await expect
      .poll(
        async () =>
          (await call<Array<{ message: string }>>("GET", `/device/v2/${uuid}/logs?count=200`)).map((l) => l.message),
        { timeout: 30_000, interval: 1000 },
      )
      .toContainEqual(expect.stringMatching(/^Applied environment variable GREETING/));
    await page.goto(url(`/fleets/${fleetId}/envvars`));
    await page.getByRole("region", { name: "Environment variables" }).getByRole("button", { name: "1 device" }).click();
    await page.getByRole("dialog", { name: "Devices overriding GREETING" }).getByText("hola").waitFor();
  });

  it("sets a variable on three devices at once from the device table", async () => {
    await page.goto(url(`/fleets/${fleetId}/devices`));
    const grid = page.getByRole("grid", { name: "Devices" });
    await expect.poll(() => grid.getByRole("row").count(), { timeout: 60_000 }).toBe(4);
    await grid.getByRole("checkbox", { name: "Select all rows" }).check();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Set a variable" }).click();
    const dialog = page.getByRole("dialog", { name: "Set a variable on the selected devices" });
    await dialog.getByLabel("Name").fill("SITE");
    await dialog.getByLabel("Value").fill("lobby");
    await dialog.getByRole("button", { name: "Set" }).click();
    await page.getByText("Variable set").waitFor();
    const set = await call<{ d: Array<{ value: string }> }>(
      "GET",
      `/v7/device_environment_variable?$select=value&$filter=name eq 'SITE' and device/belongs_to__application eq ${fleetId}`,
    );
    expect(set.d.map((row) => row.value)).toEqual(["lobby", "lobby", "lobby"]);
  });
});
