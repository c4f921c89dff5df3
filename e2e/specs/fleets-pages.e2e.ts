import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, demoIds, shot } from "./fleets-helpers.ts";

/**
 * The other fleet pages of issue 6: a block's summary (image reference, default release, deploy
 * to fleet coming soon), the class-prefix redirect, apps with the Alpha badge, the organization's
 * fleet list, and the free plan's device allowance on the fleet summary.
 */
describe("fleet pages: blocks, apps, organization lists, free plan", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  const ids = { fleet: 0, block: 0, org: 0, deviceType: 0 };
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const call = <T>(method: string, path: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, path, body);

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(0, { viewport: { width: 1280, height: 800 } }));
    Object.assign(ids, await demoIds(page, flotilla.apiUrl));
    const types = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/device_type?$select=id&$filter=slug eq 'raspberrypi4-64'",
    );
    ids.deviceType = types.d[0]?.id ?? 0;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("shows a block's image reference, default release and a deploy button that is coming soon", async () => {
    await call("POST", "/v7/release", {
      belongs_to__application: ids.block,
      commit: "feedfacefeedfacefeedfacefeedface",
      status: "success",
      composition: {},
      source: "cloud",
      semver_major: 2,
      semver_minor: 0,
      semver_patch: 1,
    });
    // A block opened under /fleets goes to its own class path.
    await page.goto(url(`/fleets/${ids.block}`));
    await page.waitForURL(new RegExp(`/blocks/${ids.block}$`));
    await page.getByRole("heading", { name: "demo-block" }).waitFor();
    const host = new URL(flotilla.apiUrl).host;
    await page.getByText(`${host}/demo/demo-block`).waitFor();
    expect(await page.getByRole("button", { name: /Deploy to fleet/ }).isDisabled()).toBe(true);
    await page.getByText("coming soon").first().waitFor();
    await page.getByLabel("Default release").click();
    await page.getByRole("option", { name: "2.0.1 (feedfac)" }).click();
    await page.getByText("Pinned to release").waitFor();
    await shot(page, "14-block-summary");
    // The block menu has no provisioning keys.
    const menu = page.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Settings" }).waitFor();
    expect(await menu.getByRole("link", { name: "Provisioning keys" }).count()).toBe(0);
  });

  it("lists apps with the Alpha badge when the apps display is on", async () => {
    await page.evaluate(() => localStorage.setItem("flotilla.displayApps", "true"));
    await page.goto(url("/apps"));
    await page.getByRole("heading", { name: "Apps", exact: true }).waitFor();
    await page.getByRole("main").getByText("Alpha").waitFor();
    await page.getByText("No apps to show").waitFor();
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: /Apps/ }).waitFor();
    await page.evaluate(() => localStorage.removeItem("flotilla.displayApps"));
  });

  it("lists an organization's fleets and blocks", async () => {
    await page.goto(url(`/orgs/${ids.org}/fleets`));
    await page.getByRole("table", { name: "Fleets" }).getByRole("link", { name: "demo-fleet" }).waitFor();
    await page.getByText("Demo").first().waitFor();
    await page.goto(url(`/orgs/${ids.org}/blocks`));
    await page.getByRole("table", { name: "Blocks" }).getByRole("link", { name: "demo-block" }).waitFor();
  });

  it("sets the repository URL, public flag, fleet type and default device type", async () => {
    const settings = async () =>
      (
        await call<{
          d: Array<{
            is_stored_at__repository_url: string | null;
            is_public: boolean;
            application_type: Array<{ slug: string }>;
            is_for__device_type: Array<{ slug: string }>;
          }>;
        }>(
          "GET",
          `/v7/application(${ids.fleet})?$select=is_stored_at__repository_url,is_public&$expand=application_type($select=slug),is_for__device_type($select=slug)`,
        )
      ).d[0];
    await page.goto(url(`/fleets/${ids.fleet}/settings`));
    const repository = page.getByRole("region", { name: "Repository" });
    await repository.getByLabel("Repository URL").fill("https://github.com/acme/widget");
    await repository.getByRole("button", { name: "Save" }).click();
    await page.getByText("Repo url set").first().waitFor();
    expect((await settings())?.is_stored_at__repository_url).toBe("https://github.com/acme/widget");
    await repository.getByLabel("Repository URL").fill("");
    await repository.getByRole("button", { name: "Save" }).click();
    await expect.poll(async () => (await settings())?.is_stored_at__repository_url).toBeNull();

    const visibility = page.getByRole("region", { name: "Public" });
    await visibility.getByRole("switch").click();
    await page.getByText("The fleet is now public").waitFor();
    expect((await settings())?.is_public).toBe(true);

    const type = page.getByRole("region", { name: "Fleet type" });
    await type.getByLabel("Fleet type").click();
    const options = await page.getByRole("option").allTextContents();
    // Legacy types are listed last.
    expect(options.slice(-2).map((text) => text.slice(0, 9))).toEqual(["Legacy v1", "Legacy v2"]);
    await page.getByRole("option", { name: "Essentials" }).click();
    await type.getByRole("button", { name: "Change" }).click();
    await page.getByText("Fleet type changed successfully").waitFor();
    expect((await settings())?.application_type[0]?.slug).toBe("essentials");

    // Only device types of the fleet's CPU architecture (aarch64) are offered.
    const deviceType = page.getByRole("region", { name: "Default device type" });
    await deviceType.getByLabel("Default device type").click();
    await page.getByRole("option", { name: "Raspberry Pi 5" }).waitFor();
    expect(await page.getByRole("option", { name: "Raspberry Pi 3", exact: true }).count()).toBe(0);
    expect(await page.getByRole("option", { name: "Intel NUC" }).count()).toBe(0);
    await page.getByRole("option", { name: "Raspberry Pi 5" }).click();
    await deviceType.getByRole("button", { name: "Change" }).click();
    await page.getByText("Default device type changed").waitFor();
    expect((await settings())?.is_for__device_type[0]?.slug).toBe("raspberrypi5");
    await shot(page, "17-settings-changed");
  });

  it("nudges from 4 free-plan devices and blocks adding devices once the free allowance of 10 is reached", async () => {
    const addDevices = async (from: number, to: number) => {
      for (let n = from; n < to; n++) {
        await call("POST", "/v7/device", {
          belongs_to__application: ids.fleet,
          is_of__device_type: ids.deviceType,
          device_name: `device-${n}`,
        });
      }
    };
    await addDevices(0, 3);
    await page.goto(url(`/fleets/${ids.fleet}`));
    await page
      .getByRole("region", { name: "Device status" })
      .getByRole("row", { name: /Total\s*3/ })
      .waitFor();
    expect(await page.getByText("devices on the free plan").count()).toBe(0);
    await addDevices(3, 4);
    await page.reload();
    await page.getByText("This organization runs 4 devices on the free plan, which covers 10.").waitFor();
    await addDevices(4, 10);
    await page.reload();
    await page.getByText("Free plan allowance reached").waitFor();
    expect(await page.getByText("devices on the free plan").count()).toBe(0);
    const status = page.getByRole("region", { name: "Device status" });
    await status.getByRole("row", { name: /Total\s*10/ }).waitFor();
    expect(await status.getByRole("link", { name: "Add device" }).getAttribute("aria-disabled")).toBe("true");
    await shot(page, "15-free-plan-reached");
    await page.goto(url("/fleets"));
    await page
      .getByRole("table", { name: "Fleets" })
      .getByRole("row", { name: /demo-fleet/ })
      .getByText("10")
      .first()
      .waitFor();
    await page.getByRole("button", { name: "Grid" }).click();
    const card = page.getByRole("list", { name: "Fleets" }).getByRole("listitem", { name: "demo-fleet" });
    await card.getByText("10 devices").waitFor();
    // Devices that never connected are inactive, as balena says.
    await card.getByText("Inactive").waitFor();
    await shot(page, "18-grid-with-devices");
  });
});
