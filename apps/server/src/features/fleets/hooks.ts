import crypto from "node:crypto";
import {
  APPLICATION_CLASSES,
  type ApplicationClass,
  type ApplicationType,
  FREE_PLAN_DEVICE_ALLOWANCE,
  fleetTypeState,
  freePlanDeviceBlock,
  isDiscontinuedDeviceType,
} from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import type { HookContext, ResourceHooks } from "../../odata/index.ts";
import { requireAction } from "../data-api/actions.ts";
import { isPaidOrganization } from "../organizations/queries.ts";
import { checkedFleetName, nameTaken } from "./fleet-name.ts";
import {
  applicationTypeById,
  applicationTypeIdBySlug,
  deleteActors,
  deleteFleetDevices,
  detachFromOrganization,
  deviceTypeArchitecture,
  type FleetFacts,
  fleetDeviceTypeContract,
  fleetFacts,
  isNameTaken,
  isOrganizationAdministrator,
  newActor,
  organizationDeviceCount,
  organizationFacts,
  organizationOfFleet,
  privateDeviceTypeOutOfReach,
} from "./queries.ts";

const DEFAULT_APPLICATION_TYPE = "microservices";

type Tx = HookContext["tx"];

const missing = (value: unknown) => value === undefined || value === null;

/**
 * Fleets, apps and blocks written through the data API (balena-sdk `application.create`,
 * `rename`, `remove`, and PATCHes of the settings page): server-chosen fields and the rules of
 * spec 2 §5 "Fleet name", "Creating a fleet" and "Fleet changes".
 */
export const applicationHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    if (missing(body.app_name) || missing(body.organization) || missing(body.is_for__device_type)) {
      throw new FlotillaError("missing_required_attributes");
    }
    body.app_name = checkedFleetName(body.app_name);
    const applicationClass = (body.is_of__class ?? "fleet") as ApplicationClass;
    if (!APPLICATION_CLASSES.includes(applicationClass)) {
      throw new FlotillaError("bad_request", `"is_of__class" must be one of ${APPLICATION_CLASSES.join(", ")}`);
    }
    const organization = await organizationFacts(tx, Number(body.organization));
    // A missing organization is refused by the create permission check too; say it plainly here.
    if (!organization) throw new FlotillaError("bad_request", '"organization" does not exist');
    if (organization.isFrozen) throw new FlotillaError("organization_frozen");
    const deviceType = await deviceTypeArchitecture(tx, Number(body.is_for__device_type));
    if (!deviceType) {
      throw new FlotillaError("invalid_device_type", undefined, { params: { type: String(body.is_for__device_type) } });
    }
    refuseDiscontinued(deviceType);
    if (await isNameTaken(tx, Number(body.organization), String(body.app_name))) {
      throw nameTaken(applicationClass);
    }
    if (missing(body.application_type)) {
      body.application_type = await applicationTypeIdBySlug(tx, DEFAULT_APPLICATION_TYPE);
    } else {
      const type = await applicationTypeById(tx, Number(body.application_type));
      if (!type) throw new FlotillaError("bad_request", '"application_type" does not exist');
      await refuseUnavailableType(tx, type, deviceType.contract, Number(body.organization));
    }
    body.actor = await newActor(tx);
    body.uuid = crypto.randomBytes(16).toString("hex");
    body.slug = `${organization.handle}/${String(body.app_name)}`.toLowerCase();
    body.is_of__class = applicationClass;
  },

  async beforeUpdate(context) {
    const { tx, ids, body } = context;
    normalizeSettings(body);
    // The name and the organization make the slug, one per fleet: one fleet at a time.
    if ((body.app_name !== undefined || body.organization !== undefined) && ids.length !== 1) {
      throw new FlotillaError("bad_request", "Rename or transfer one fleet at a time");
    }
    const checked = ["app_name", "organization", "application_type", "is_for__device_type", "is_public"];
    if (!checked.some((key) => body[key] !== undefined)) return;
    for (const id of ids) {
      const fleet = await fleetFacts(tx, id);
      if (!fleet) continue;
      if (body.app_name !== undefined) await checkRename(tx, id, fleet, body);
      if (body.organization !== undefined && Number(body.organization) !== fleet.organization) {
        await checkTransfer(context, id, fleet, body);
      }
      let isLegacy = fleet.isLegacy;
      if (body.application_type !== undefined) isLegacy = await checkTypeChange(context, id, fleet, body);
      // Several fleets at once: each keeps its CPU architecture (spec 2 §5).
      if (body.is_for__device_type !== undefined) await checkDeviceTypeChange(tx, fleet, body);
      if (body.is_public === true && isLegacy) {
        const url =
          body.is_stored_at__repository_url === undefined ? fleet.repositoryUrl : body.is_stored_at__repository_url;
        if (missing(url)) throw new FlotillaError("repo_url_required");
      }
    }
  },

  async beforeDelete({ tx, ids }) {
    // Devices go with their fleet (spec 2: deleting a fleet also removes its devices), and so do
    // the devices' actors, whose API keys cascade from them.
    await deleteFleetDevices(tx, ids);
  },

  async afterDelete({ tx, rows }) {
    await deleteActors(
      tx,
      rows.map((r) => Number(r.actor)),
    );
  },
};

/** Repository URL: blank stores null (spec 2 §5). Support access: not in the past (spec 2 §5 Devices); null revokes. */
function normalizeSettings(body: Record<string, unknown>) {
  const url = body.is_stored_at__repository_url;
  if (typeof url === "string" && url.trim() === "") body.is_stored_at__repository_url = null;
  const until = body.is_accessible_by_support_until__date;
  if (!missing(until)) {
    const time = new Date(until as string | number).getTime();
    if (Number.isNaN(time)) {
      throw new FlotillaError("invalid_parameter", undefined, {
        params: { suppliedValue: String(until), parameterName: "is_accessible_by_support_until__date" },
      });
    }
    if (time < Date.now()) throw new FlotillaError("support_access_in_past");
  }
}

async function checkRename(tx: Tx, id: number, fleet: FleetFacts, body: Record<string, unknown>) {
  body.app_name = checkedFleetName(body.app_name);
  if (body.app_name === fleet.appName) return;
  if (fleet.isLegacy) throw new FlotillaError("cannot_rename_legacy");
  if (await isNameTaken(tx, fleet.organization, String(body.app_name), id)) {
    throw nameTaken(fleet.applicationClass);
  }
  body.slug = `${fleet.handle}/${String(body.app_name)}`.toLowerCase();
}

/**
 * Transfer of ownership (spec 2 §5): resin.application.transfer on the fleet and administrator
 * of the target organization; neither organization frozen; no resource of the same name there.
 */
async function checkTransfer(
  { tx, actorId }: HookContext,
  id: number,
  fleet: FleetFacts,
  body: Record<string, unknown>,
) {
  if (actorId === undefined) throw new FlotillaError("forbidden");
  await requireAction(tx, { actor: actorId, globalRoles: [] }, "application.transfer", { fleet: id });
  const targetId = Number(body.organization);
  const target = await organizationFacts(tx, targetId);
  if (!target || !(await isOrganizationAdministrator(tx, targetId, actorId))) {
    throw new FlotillaError("transfer_target_admin_required");
  }
  if (fleet.isFrozen || target.isFrozen) throw new FlotillaError("organization_frozen");
  // The target must be able to use the fleet's device type (a private type needs its access).
  const privateType = await privateDeviceTypeOutOfReach(tx, id, targetId);
  if (privateType !== undefined)
    throw new FlotillaError("invalid_device_type", undefined, { params: { type: privateType } });
  const name = String(body.app_name ?? fleet.appName);
  if (await isNameTaken(tx, targetId, name, id)) {
    throw nameTaken(fleet.applicationClass);
  }
  body.slug = `${target.handle}/${name}`.toLowerCase();
  await detachFromOrganization(tx, id, targetId);
}

/** Change of fleet type (spec 2 §4, §6): resin.application.change-type; paid-only types need a paid plan. */
async function checkTypeChange(
  { tx, actorId }: HookContext,
  id: number,
  fleet: FleetFacts,
  body: Record<string, unknown>,
) {
  if (actorId === undefined) throw new FlotillaError("forbidden");
  await requireAction(tx, { actor: actorId, globalRoles: [] }, "application.change-type", { fleet: id });
  const type = await applicationTypeById(tx, Number(body.application_type));
  if (!type) throw new FlotillaError("bad_request", '"application_type" does not exist');
  await refuseUnavailableType(tx, type, await fleetDeviceTypeContract(tx, id), fleet.organization);
  return type.isLegacy;
}

/** The default device type changes only to a type of the same CPU architecture (spec 2 §5). */
async function checkDeviceTypeChange(tx: Tx, fleet: FleetFacts, body: Record<string, unknown>) {
  const type = await deviceTypeArchitecture(tx, Number(body.is_for__device_type));
  if (!type) {
    throw new FlotillaError("invalid_device_type", undefined, { params: { type: String(body.is_for__device_type) } });
  }
  refuseDiscontinued(type);
  if (type.architecture !== fleet.architecture) throw new FlotillaError("no_compatible_architecture");
}

/** Spec 2 §8 "Discontinued device type: {type}": no new fleet or device of such a type. */
export function refuseDiscontinued(deviceType: { slug: string; contract: unknown }) {
  if (isDiscontinuedDeviceType(deviceType.contract)) {
    throw new FlotillaError("discontinued_device_type", undefined, { params: { type: deviceType.slug } });
  }
}

/**
 * A fleet type the create and change dialogs would not offer (spec 2 §4 "Fleet type options"):
 * 402 `application_type_paid_only` on a free plan, 400 `application_type_not_available` otherwise.
 */
async function refuseUnavailableType(tx: Tx, type: ApplicationType, deviceTypeContract: unknown, organization: number) {
  const isFree = !(await isPaidOrganization(tx, organization));
  const state = fleetTypeState(type, deviceTypeContract, { isFree });
  if (state === "paid_only")
    throw new FlotillaError("application_type_paid_only", undefined, { params: { type: type.slug } });
  if (state !== "ok")
    throw new FlotillaError("application_type_not_available", undefined, { params: { type: type.slug } });
}

/**
 * Devices added through the data API: on the free plan (or without a subscription) an
 * organization holds at most FREE_PLAN_DEVICE_ALLOWANCE devices (spec 2 §5, spec-decisions 13).
 */
export const deviceHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    const organization = missing(body.belongs_to__application)
      ? undefined
      : await organizationOfFleet(tx, Number(body.belongs_to__application));
    const blocked =
      organization === undefined || (await isPaidOrganization(tx, organization))
        ? undefined
        : freePlanDeviceBlock(await organizationDeviceCount(tx, organization), FREE_PLAN_DEVICE_ALLOWANCE);
    if (blocked === "free plan allowance reached") throw new FlotillaError("free_plan_allowance_reached");
    if (blocked) throw new FlotillaError("free_plan_allowance_exceeded");
    if (!missing(body.is_of__device_type)) {
      const deviceType = await deviceTypeArchitecture(tx, Number(body.is_of__device_type));
      if (deviceType) refuseDiscontinued(deviceType);
    }
    // A device acts as itself (its API keys hang off its actor); a missing uuid is chosen here.
    body.actor = await newActor(tx);
    if (missing(body.uuid)) body.uuid = crypto.randomBytes(16).toString("hex");
  },

  async afterDelete({ tx, rows }) {
    await deleteActors(
      tx,
      rows.map((r) => Number(r.actor)),
    );
  },
};
