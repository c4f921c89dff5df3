import crypto from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { payForPlan } from "./billing-helpers.ts";
import { api } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

/**
 * What a paid plan changes (issue 19 "Done when"): on the free plan a paid-only role is offered
 * but disabled; on Pilot the administrator grants it; the plan switches to annual billing; and
 * with more devices than the free plan allows, moving back to it is refused with the warning
 * and a contact-sales button. The card and the first upgrade are set up through the billing API
 * (billing.e2e.ts walks through them in the page).
 */
describe("paid plans: roles, annual billing, the free plan's allowance", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({}, (ui) => {
    ({ flotilla, page } = ui);
  });
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const call = <T>(method: string, path: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, path, body);

  it("grants a paid-only role after the upgrade, switches to annual, and is refused the free plan over its allowance", async () => {
    await page
      .context()
      .addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(/\/fleets$/);
    const { d: orgs } = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/organization?$select=id&$filter=name eq 'Demo'",
    );
    const orgId = orgs[0]?.id ?? 0;
    const { d: fleets } = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'",
    );
    const fleetId = fleets[0]?.id ?? 0;

    // On the free plan, Operator is offered but disabled.
    const roleOptions = async () => {
      await page.goto(url(`/fleets/${fleetId}/members`));
      await page.getByRole("button", { name: "Add member" }).click();
      const dialog = page.getByRole("dialog", { name: "Add member" });
      await dialog.getByLabel("Username or email").fill("demo-member");
      await dialog.getByRole("combobox", { name: "Role" }).click();
      return { dialog, operator: page.getByRole("option", { name: /^Operator/ }) };
    };
    const free = await roleOptions();
    expect(await free.operator.getAttribute("aria-disabled")).toBe("true");
    // The limited roles are paid-only too: disabled on the free plan (spec 3 §6).
    expect(await page.getByRole("option", { name: /^Limited operator/ }).getAttribute("aria-disabled")).toBe("true");
    await page.keyboard.press("Escape");
    await free.dialog.getByRole("button", { name: "Cancel" }).click();

    // A card and Pilot, monthly.
    await payForPlan(page, flotilla.apiUrl, orgId, "pilot-v2");

    const paid = await roleOptions();
    // The option turns enabled once the organization's plan has loaded.
    await expect.poll(() => paid.operator.getAttribute("aria-disabled")).toBeNull();
    // Pilot provides the limited roles (a plan feature, spec 1 §6.2): offered with their prices.
    for (const limited of ["Limited operator", "Limited developer"]) {
      const option = page.getByRole("option", { name: new RegExp(`^${limited}`) });
      await option.waitFor();
      expect(await option.getAttribute("aria-disabled")).toBeNull();
    }
    // Pilot includes no seats of the fleet roles: each keeps its price (spec 3 §6, ORG-092).
    await page
      .getByRole("option", { name: /^Developer/ })
      .getByText("$49 per member / month")
      .waitFor();
    await paid.operator.click();
    // What the seat costs, before adding it (spec 3 §9: dollars per month with 2 decimals).
    await paid.dialog.getByText(/^Total: \$29\.00\/month for this member/).waitFor();
    await paid.dialog.getByRole("button", { name: "Add" }).click();
    await page.getByText("Resource added").waitFor();
    await page
      .getByRole("table", { name: "Members" })
      .getByRole("row", { name: /demo-member.*Operator/ })
      .waitFor();

    // The organization's invite says the same of the administrator seats, and the total is nothing
    // while one is left.
    await page.goto(url(`/orgs/${orgId}/members`));
    await page.getByRole("button", { name: "Invite member" }).click();
    const invite = page.getByRole("dialog", { name: "Invite member" });
    await invite.getByRole("combobox", { name: "Role" }).click();
    await page
      .getByRole("option", { name: /^Administrator/ })
      .getByText(/^1 of 2 included seats used$/)
      .waitFor();
    await page.getByRole("option", { name: /^Administrator/ }).click();
    await invite
      .getByText(/^Total: \$0\.00\/month: an administrator seat the plan includes \(1 of 2 used\)\.$/)
      .waitFor();
    await page.waitForTimeout(300);
    await page.screenshot({ path: "/tmp/shots-billing-plans-invite-seats.png" });
    await invite.getByRole("button", { name: "Cancel" }).click();

    // Pilot, billed annually.
    await page.goto(url(`/orgs/${orgId}/billing`));
    const current = page.getByRole("region", { name: "Current plan" });
    await current.getByText("Billed monthly").waitFor();
    const plans = page.getByRole("table", { name: "Plans" });
    await plans
      .getByRole("row", { name: "Pilot" })
      .getByRole("button", { name: /Switch to annual/ })
      .click();
    const change = page.getByRole("dialog", { name: "Change plan" });
    await change.getByRole("button", { name: "Confirm" }).click();
    await change.waitFor({ state: "hidden" });
    await current.getByText("Billed annually").waitFor();
    // The plan's tier image, its charges with their codes, and the add-on plan (spec 3 §3, §9).
    await current.getByRole("img", { name: "Pilot tier" }).waitFor();
    await plans.getByRole("row", { name: "Pilot" }).getByRole("img", { name: "Pilot tier" }).waitFor();
    await page.getByRole("table", { name: "Charges" }).getByRole("columnheader", { name: "Code" }).waitFor();
    await current.getByRole("region", { name: "Add-on plan" }).waitFor();
    // Within the paid month nothing is charged now: the next bill credits the month's unused
    // days and charges the annual plan for the same days.
    const charges = page.getByRole("table", { name: "Charges" });
    await charges
      .getByRole("row")
      .filter({ hasText: /^Unused time on Pilot \(monthly\), .*-\$/ })
      .waitFor();
    await charges.getByRole("row").filter({ hasText: "Remaining time on Pilot (annual)" }).waitFor();
    const invoices = page.getByRole("table", { name: "Invoices" });
    await invoices.getByRole("row").filter({ hasText: "$299.00" }).getByText("Paid").waitFor();
    expect(await invoices.getByRole("row").filter({ hasText: "$3,229.20" }).count()).toBe(0);

    // Eleven devices: more than the free plan's ten. Moving to it is refused with the reason.
    const key = await call<string>("POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: fleetId,
      roles: ["provisioning-api-key"],
    });
    const uuids: string[] = [];
    for (let n = 0; n < 11; n += 1) {
      uuids.push(crypto.randomBytes(16).toString("hex"));
      const registered = await fetch(`${flotilla.apiUrl}/device/register`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({
          application: fleetId,
          uuid: uuids[n],
          device_type: "raspberrypi4-64",
          api_key: crypto.randomBytes(20).toString("hex"),
        }),
      });
      expect(registered.status).toBe(201);
    }
    // On a paid plan, deactivating a device is not said to need one.
    await page.goto(url(`/devices/${uuids[0]}/settings`));
    const deactivate = page.getByRole("region", { name: "Deactivate" });
    await deactivate.getByText("Stop the device from taking part in the fleet.").waitFor();
    expect(await deactivate.getByText("Needs a paid plan.").count()).toBe(0);
    expect(await deactivate.getByRole("button", { name: "Deactivate" }).isEnabled()).toBe(true);
    await page.screenshot({ path: "/tmp/shots/device-deactivate-paid.png" });

    await page.goto(url(`/orgs/${orgId}/billing`));
    await current.getByRole("button", { name: "Move to the free plan" }).click();
    const toFree = page.getByRole("dialog", { name: "Change plan" });
    await toFree
      .getByText(
        "The free plan includes 10 devices and this organization has 11. Remove devices or contact sales to move to the free plan.",
      )
      .waitFor();
    await toFree
      .getByRole("link", { name: "Contact sales" })
      .or(toFree.getByRole("button", { name: "Contact sales" }))
      .waitFor();
    expect(await toFree.getByRole("button", { name: "Confirm" }).count()).toBe(0);
    // The server refuses it too, in its own words.
    await expect(
      call("PATCH", `/billing/v1/account/${orgId}/plan`, { tier: "free", cycle: "monthly" }),
    ).rejects.toThrow("The free plan allows 10 devices and this organization has 11");
  });
});
