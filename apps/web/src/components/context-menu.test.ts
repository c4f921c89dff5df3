import { describe, expect, it } from "vitest";
import { contextMenu } from "./context-menu.ts";

const labels = (entries: Array<{ label: string }>) => entries.map((entry) => entry.label);

describe("fleet, app and block side menus", () => {
  const full = { displayApps: false, fleetSettings: true, fleetApiKeys: true, fleetMembers: true };
  it("offers devices and provisioning keys on fleets only, keys only with api_key.read", () => {
    expect(labels(contextMenu("/fleets/1", { fleetId: "1" }, full))).toEqual([
      "nav.summary",
      "nav.devices",
      "nav.releases",
      "nav.rollouts",
      "nav.commands",
      "nav.logs",
      "nav.envvars",
      "nav.config",
      "nav.settings",
      "nav.api_keys",
      "nav.members",
      "nav.teams",
    ]);
    expect(labels(contextMenu("/blocks/1", { fleetId: "1" }, full))).not.toContain("nav.api_keys");
    expect(labels(contextMenu("/blocks/1", { fleetId: "1" }, full))).not.toContain("nav.devices");
    expect(labels(contextMenu("/fleets/1", { fleetId: "1" }, { ...full, fleetApiKeys: false }))).not.toContain(
      "nav.api_keys",
    );
  });

  it("hides settings for observers and app members and teams without the role to read them", () => {
    expect(labels(contextMenu("/fleets/1", { fleetId: "1" }, { ...full, fleetSettings: false }))).not.toContain(
      "nav.settings",
    );
    expect(labels(contextMenu("/apps/1", { fleetId: "1" }, { ...full, fleetMembers: false }))).toEqual([
      "nav.summary",
      "nav.releases",
      "nav.settings",
    ]);
  });
});

describe("device side menu", () => {
  const base = { displayApps: false, fleetSettings: true };
  it("has summary, envvars, config, actions, settings and location, settings only for those who may change the device", () => {
    expect(labels(contextMenu("/devices/abc", { uuid: "abc" }, { ...base, deviceSettings: true }))).toEqual([
      "nav.summary",
      "nav.envvars",
      "nav.config",
      "nav.actions",
      "nav.settings",
      "nav.location",
    ]);
    expect(
      labels(contextMenu("/devices/abc", { uuid: "abc" }, { ...base, deviceSettings: true, deviceDiagnostics: true })),
    ).toContain("nav.diagnostics");
    expect(labels(contextMenu("/devices/abc/actions", { uuid: "abc" }, { ...base, deviceSettings: false }))).toEqual([
      "nav.summary",
      "nav.envvars",
      "nav.config",
      "nav.actions",
      "nav.location",
    ]);
  });
});

describe("release side menu", () => {
  const base = { displayApps: false, fleetSettings: true };
  it("has summary and settings, settings only with release.update, under the release's class path", () => {
    const params = { fleetId: "1", releaseId: "7" };
    const menu = contextMenu("/blocks/1/releases/7", params, { ...base, releaseSettings: true });
    expect(menu.context).toBe("release");
    expect(menu.map((entry) => entry.to)).toEqual(["/blocks/1/releases/7", "/blocks/1/releases/7/settings"]);
    expect(labels(contextMenu("/fleets/1/releases/7", params, { ...base, releaseSettings: false }))).toEqual([
      "nav.summary",
    ]);
  });

  it("lists releases after summary for blocks and apps, after devices for fleets", () => {
    expect(labels(contextMenu("/blocks/1", { fleetId: "1" }, base)).slice(0, 2)).toEqual([
      "nav.summary",
      "nav.releases",
    ]);
  });
});

describe("organization side menu", () => {
  const base = { displayApps: false, fleetSettings: true };
  it("shows Billing and Credits only with organization.access_billing", () => {
    const params = { orgId: "3" };
    const withBilling = contextMenu("/orgs/3", params, { ...base, orgBilling: true });
    expect(withBilling.slice(-2)).toEqual([
      { to: "/orgs/3/billing", label: "nav.billing", icon: "billing" },
      { to: "/orgs/3/credits", label: "nav.credits", icon: "credits" },
    ]);
    const without = labels(contextMenu("/orgs/3", params, { ...base, orgBilling: false }));
    expect(without).not.toContain("nav.billing");
    expect(without).not.toContain("nav.credits");
  });
});

describe("organization side menu for administrators", () => {
  const base = { displayApps: false, fleetSettings: true };
  it("shows Audit log and Webhooks only with organization.read_audit_log and manage_webhooks", () => {
    const params = { orgId: "3" };
    const admin = contextMenu("/orgs/3", params, { ...base, orgAuditLog: true, orgWebhooks: true });
    expect(admin.slice(-2)).toEqual([
      { to: "/orgs/3/audit", label: "nav.audit_log", icon: "audit" },
      { to: "/orgs/3/webhooks", label: "nav.webhooks", icon: "webhooks" },
    ]);
    const member = labels(contextMenu("/orgs/3", params, { ...base, orgAuditLog: false, orgWebhooks: false }));
    expect(member).not.toContain("nav.audit_log");
    expect(member).not.toContain("nav.webhooks");
  });
});

describe("home menu", () => {
  it("has the Identity provider entry only when SAML is available to the user", () => {
    const options = { displayApps: false, fleetSettings: false };
    expect(labels(contextMenu("/fleets", {}, options))).not.toContain("nav.identity_provider");
    expect(labels(contextMenu("/fleets", {}, { ...options, identityProvider: true }))).toEqual([
      "nav.fleets",
      "nav.blocks",
      "nav.organizations",
      "nav.identity_provider",
    ]);
  });
});
