import { useQuery } from "@tanstack/react-query";
import { useParams, useRouterState } from "@tanstack/react-router";
import { useSdk } from "../app-services.tsx";
import { deviceAbilities, deviceQuery } from "../features/devices/data.ts";
import { fleetAbilities, useFleet } from "../features/fleet-access/data.ts";
import { useIdentityProviderMenu } from "../features/identity/data.ts";
import { fleetCan, organizationCan } from "../features/orgs/access.ts";
import { useMyRoleIn } from "../features/orgs/data.ts";

export type NavLabel =
  | "nav.fleets"
  | "nav.apps"
  | "nav.blocks"
  | "nav.organizations"
  | "nav.identity_provider"
  | "nav.summary"
  | "nav.members"
  | "nav.teams"
  | "nav.billing"
  | "nav.credits"
  | "nav.audit_log"
  | "nav.webhooks"
  | "nav.settings"
  | "nav.api_keys"
  | "nav.devices"
  | "nav.actions"
  | "nav.location"
  | "nav.envvars"
  | "nav.config"
  | "nav.releases"
  | "nav.rollouts"
  | "nav.commands"
  | "nav.logs"
  | "nav.diagnostics";
export type MenuIcon =
  | "fleets"
  | "apps"
  | "blocks"
  | "orgs"
  | "identity"
  | "summary"
  | "members"
  | "teams"
  | "billing"
  | "credits"
  | "audit"
  | "webhooks"
  | "settings"
  | "keys"
  | "devices"
  | "actions"
  | "location"
  | "variables"
  | "config"
  | "releases"
  | "rollouts"
  | "commands"
  | "logs"
  | "diagnostics";
export type MenuContext =
  | "home"
  | "organization"
  | "member"
  | "team"
  | "fleet"
  | "app"
  | "block"
  | "device"
  | "release";

export interface MenuEntry {
  to: string;
  label: NavLabel;
  icon: MenuIcon;
  alpha?: boolean;
  exact?: boolean;
}

/**
 * The side menu of a context (spec 1 §2.5): Home; organization (summary, fleets, apps, blocks,
 * members, teams); member (summary, fleets, apps, blocks, teams); team (summary, fleets, apps,
 * blocks, members); fleet/app/block (summary, devices for fleets, settings unless observer,
 * api-keys for fleets with api_key.read, members, teams); device (summary, envvars, config, actions, settings
 * unless observer, location, diagnostics with device.access_diagnostics); fleets also have envvars and
 * config. Apps
 * entries only with the apps display on. The organization's Billing entry needs
 * organization.access_billing (spec 3 §2 Organizations), and so does Credits next to it; Audit log
 * and Webhooks need organization.read_audit_log and organization.manage_webhooks (administrators).
 */
export function contextMenu(
  pathname: string,
  params: { orgId?: string; memberId?: string; teamId?: string; fleetId?: string; uuid?: string; releaseId?: string },
  options: {
    displayApps: boolean;
    fleetSettings: boolean;
    fleetApiKeys?: boolean;
    fleetMembers?: boolean;
    deviceSettings?: boolean;
    deviceDiagnostics?: boolean;
    /** resin.release.update: the release settings entry (hidden for observers, spec 1 §2.5). */
    releaseSettings?: boolean;
    /** organization.access_billing: the organization's Billing entry. */
    orgBilling?: boolean;
    /** organization.read_audit_log: the organization's Audit log entry. */
    orgAuditLog?: boolean;
    /** organization.manage_webhooks: the organization's Webhooks entry. */
    orgWebhooks?: boolean;
    /** SAML is available to the user (spec 1 §2.5; spec 3 §2): the Identity provider entry. */
    identityProvider?: boolean;
  },
): MenuEntry[] & { context: MenuContext } {
  const withContext = (context: MenuContext, entries: MenuEntry[]) => Object.assign(entries, { context });
  const apps = (base: string): MenuEntry[] =>
    options.displayApps ? [{ to: `${base}/apps`, label: "nav.apps", icon: "apps", alpha: true }] : [];
  if (params.orgId && params.memberId) {
    const base = `/orgs/${params.orgId}/members/${params.memberId}`;
    return withContext("member", [
      { to: base, label: "nav.summary", icon: "summary", exact: true },
      { to: `${base}/fleets`, label: "nav.fleets", icon: "fleets" },
      ...apps(base),
      { to: `${base}/blocks`, label: "nav.blocks", icon: "blocks" },
      { to: `${base}/teams`, label: "nav.teams", icon: "teams" },
    ]);
  }
  if (params.orgId && params.teamId) {
    const base = `/orgs/${params.orgId}/teams/${params.teamId}`;
    return withContext("team", [
      { to: base, label: "nav.summary", icon: "summary", exact: true },
      { to: `${base}/fleets`, label: "nav.fleets", icon: "fleets" },
      ...apps(base),
      { to: `${base}/blocks`, label: "nav.blocks", icon: "blocks" },
      { to: `${base}/members`, label: "nav.members", icon: "members" },
    ]);
  }
  if (params.orgId) {
    const base = `/orgs/${params.orgId}`;
    return withContext("organization", [
      { to: base, label: "nav.summary", icon: "summary", exact: true },
      { to: `${base}/fleets`, label: "nav.fleets", icon: "fleets" },
      ...apps(base),
      { to: `${base}/blocks`, label: "nav.blocks", icon: "blocks" },
      { to: `${base}/members`, label: "nav.members", icon: "members" },
      { to: `${base}/teams`, label: "nav.teams", icon: "teams" },
      ...(options.orgBilling
        ? ([
            { to: `${base}/billing`, label: "nav.billing", icon: "billing" },
            { to: `${base}/credits`, label: "nav.credits", icon: "credits" },
          ] as const)
        : []),
      ...(options.orgAuditLog ? ([{ to: `${base}/audit`, label: "nav.audit_log", icon: "audit" }] as const) : []),
      ...(options.orgWebhooks ? ([{ to: `${base}/webhooks`, label: "nav.webhooks", icon: "webhooks" }] as const) : []),
    ]);
  }
  if (params.uuid && pathname.startsWith("/devices/")) {
    const base = `/devices/${params.uuid}`;
    return withContext("device", [
      { to: base, label: "nav.summary", icon: "summary", exact: true },
      { to: `${base}/envvars`, label: "nav.envvars", icon: "variables" },
      { to: `${base}/config`, label: "nav.config", icon: "config" },
      { to: `${base}/actions`, label: "nav.actions", icon: "actions" },
      ...(options.deviceSettings ? [{ to: `${base}/settings`, label: "nav.settings", icon: "settings" } as const] : []),
      { to: `${base}/location`, label: "nav.location", icon: "location" },
      ...(options.deviceDiagnostics
        ? [{ to: `${base}/diagnostics`, label: "nav.diagnostics", icon: "diagnostics" } as const]
        : []),
    ]);
  }
  if (params.fleetId && params.releaseId) {
    const prefix = /^\/(fleets|apps|blocks)\//.exec(pathname)?.[1] ?? "fleets";
    const base = `/${prefix}/${params.fleetId}/releases/${params.releaseId}`;
    return withContext("release", [
      { to: base, label: "nav.summary", icon: "summary", exact: true },
      ...(options.releaseSettings
        ? [{ to: `${base}/settings`, label: "nav.settings", icon: "settings" } as const]
        : []),
    ]);
  }
  if (params.fleetId) {
    const prefix = /^\/(fleets|apps|blocks)\//.exec(pathname)?.[1] ?? "fleets";
    const base = `/${prefix}/${params.fleetId}`;
    const context: MenuContext = prefix === "apps" ? "app" : prefix === "blocks" ? "block" : "fleet";
    // Members and teams of an app appear only for roles that may read them (spec 2 §2).
    const people = context !== "app" || options.fleetMembers !== false;
    return withContext(context, [
      { to: base, label: "nav.summary", icon: "summary", exact: true },
      ...(context === "fleet"
        ? ([
            { to: `${base}/devices`, label: "nav.devices", icon: "devices" },
            { to: `${base}/releases`, label: "nav.releases", icon: "releases" },
            { to: `${base}/rollouts`, label: "nav.rollouts", icon: "rollouts" },
            { to: `${base}/commands`, label: "nav.commands", icon: "commands" },
            { to: `${base}/logs`, label: "nav.logs", icon: "logs" },
            { to: `${base}/envvars`, label: "nav.envvars", icon: "variables" },
            { to: `${base}/config`, label: "nav.config", icon: "config" },
          ] as const)
        : ([{ to: `${base}/releases`, label: "nav.releases", icon: "releases" }] as const)),
      ...(options.fleetSettings ? [{ to: `${base}/settings`, label: "nav.settings", icon: "settings" } as const] : []),
      ...(context === "fleet" && options.fleetApiKeys
        ? [{ to: `${base}/api-keys`, label: "nav.api_keys", icon: "keys" } as const]
        : []),
      ...(people
        ? ([
            { to: `${base}/members`, label: "nav.members", icon: "members" },
            { to: `${base}/teams`, label: "nav.teams", icon: "teams" },
          ] as const)
        : []),
    ]);
  }
  return withContext("home", [
    { to: "/fleets", label: "nav.fleets", icon: "fleets" },
    ...(options.displayApps ? [{ to: "/apps", label: "nav.apps", icon: "apps", alpha: true } as const] : []),
    { to: "/blocks", label: "nav.blocks", icon: "blocks" },
    { to: "/orgs", label: "nav.organizations", icon: "orgs" },
    ...(options.identityProvider
      ? [{ to: "/identity-provider", label: "nav.identity_provider", icon: "identity" } as const]
      : []),
  ]);
}

export function useContextMenu(displayApps: boolean) {
  const params = useParams({ strict: false }) as {
    orgId?: string;
    memberId?: string;
    teamId?: string;
    fleetId?: string;
    uuid?: string;
    releaseId?: string;
  };
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const identityProvider = useIdentityProviderMenu();
  const fleetId = params.fleetId && /^\d+$/.test(params.fleetId) ? Number(params.fleetId) : undefined;
  const fleet = useFleet(fleetId ?? 0, fleetId !== undefined, true);
  const abilities = fleetAbilities(fleet.data ?? undefined);
  const orgId = params.orgId && /^\d+$/.test(params.orgId) ? Number(params.orgId) : undefined;
  const orgRole = useMyRoleIn(orgId);
  const sdk = useSdk();
  const device = useQuery({
    ...deviceQuery(sdk, params.uuid ?? ""),
    enabled: params.uuid !== undefined,
    throwOnError: false,
  });
  return contextMenu(pathname, params, {
    deviceSettings: deviceAbilities(device.data?.belongs_to__application[0]?.user_access_roles).settings,
    deviceDiagnostics: deviceAbilities(device.data?.belongs_to__application[0]?.user_access_roles).diagnostics,
    displayApps,
    fleetSettings: abilities.settings && abilities.update,
    fleetApiKeys: abilities.apiKeys,
    fleetMembers: abilities.readMembers,
    releaseSettings: fleetCan(abilities.role, "release", "update"),
    orgBilling: organizationCan(orgRole.data ?? undefined, "organization", "access_billing"),
    orgAuditLog: organizationCan(orgRole.data ?? undefined, "organization", "read_audit_log"),
    orgWebhooks: organizationCan(orgRole.data ?? undefined, "organization", "manage_webhooks"),
    identityProvider,
  });
}
