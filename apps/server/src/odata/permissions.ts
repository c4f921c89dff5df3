import type { Expr } from "./ast.ts";
import type { Model } from "./model.ts";
import { type AliasValues, parseFilterExpression } from "./parse.ts";

export type Action = "read" | "create" | "update" | "delete";
const ACTIONS: readonly Action[] = ["read", "create", "update", "delete"];

/**
 * What a caller may do with the rows of a resource: everything, nothing, or the rows matching any
 * of the filters (boolean expressions over the resource, as in `$filter`).
 */
export type Access = "all" | "none" | readonly Expr[];

/** The caller's rights, asked per resource (canonical name) and action by the compilers. */
export interface Permissions {
  filter(resource: string, action: Action): Access;
}

/** For the server's own work (migrations, hooks that must see everything): no restriction. */
export const allowAll: Permissions = { filter: () => "all" };

/** For anonymous callers: no access at all. */
export const denyAll: Permissions = { filter: () => "none" };

/** The alias a permission filter uses for the caller's actor id. */
export const ACTOR_ALIAS = "@__ACTOR_ID";

/**
 * Builds permissions from pinejs-style strings:
 * - `resin.all`: everything;
 * - `resin.device.all`: every action on device;
 * - `resin.device.read`: read every device;
 * - `resin.device.read?belongs_to__application/any(a:a/…/actor eq @__ACTOR_ID)`: read the devices
 *   matching the OData `$filter` after `?`, with `@__ACTOR_ID` bound to `actorId`.
 * Several grants of one resource and action are ORed. Resource names may be aliases; strings naming
 * resources the model does not have, or actions other than these four, are ignored (the tables
 * list more than the data API serves).
 * Filters are evaluated with full visibility: the navigations inside a permission filter are not
 * themselves restricted by the caller's permissions (the filter is the definition of access).
 * `nav/canAccess()` delegates: the row passes when some `nav` target passes the caller's
 * permission for the same action (`resin.device_tag.read?device/canAccess()`); a cycle of
 * delegations grants nothing by itself.
 * Without an actor, grants whose filter mentions `@__ACTOR_ID` give nothing.
 */
export function createPermissions(options: {
  model: Model;
  permissions: readonly string[];
  actorId?: number | undefined;
}): Permissions {
  const { model, actorId } = options;
  let everything = false;
  const grants = new Map<string, { all: boolean; filters: string[] }>();
  const grant = (resource: string, action: Action, filter: string | undefined) => {
    const key = `${resource}.${action}`;
    const entry = grants.get(key) ?? { all: false, filters: [] };
    if (filter === undefined) entry.all = true;
    else entry.filters.push(filter);
    grants.set(key, entry);
  };

  for (const permission of options.permissions) {
    const question = permission.indexOf("?");
    const head = question === -1 ? permission : permission.slice(0, question);
    const filter = question === -1 ? undefined : permission.slice(question + 1);
    const parts = head.split(".");
    if (parts.length === 2 && parts[1] === "all" && filter === undefined) {
      everything = true;
      continue;
    }
    if (parts.length !== 3) throw new Error(`permissions: malformed permission ${permission}`);
    const [, resourceName = "", action = ""] = parts;
    const resource = model.resource(resourceName);
    if (!resource) continue;
    if (filter !== undefined && actorId === undefined && filter.includes(ACTOR_ALIAS)) continue;
    if (action === "all") for (const each of ACTIONS) grant(resource.name, each, filter);
    else if ((ACTIONS as readonly string[]).includes(action)) grant(resource.name, action as Action, filter);
    // Custom actions (`resin.device.ssh`, `…supervisor-proxy-write`) belong to other endpoints.
  }

  const aliases: AliasValues = actorId === undefined ? {} : { [ACTOR_ALIAS]: actorId };
  const resolved = new Map<string, Access>();
  return {
    filter(resource, action) {
      if (everything) return "all";
      const key = `${resource}.${action}`;
      let access = resolved.get(key);
      if (access === undefined) {
        const entry = grants.get(key);
        access = !entry
          ? "none"
          : entry.all
            ? "all"
            : entry.filters.map((text) => parsePermissionFilter(text, aliases));
        resolved.set(key, access);
      }
      return access;
    },
  };
}

/** A malformed permission is the server's bug, not the client's: a plain Error (500), not a 400. */
function parsePermissionFilter(text: string, aliases: AliasValues): Expr {
  try {
    return parseFilterExpression(text, aliases);
  } catch (error) {
    throw new Error(`permissions: cannot parse the filter ${text}`, { cause: error });
  }
}
