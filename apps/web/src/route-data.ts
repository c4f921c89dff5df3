/**
 * What the route guards read (fleets, devices, releases, organizations and the caller's rights
 * on them), in its own chunk: the guards load it on the first signed-in navigation, so the
 * login page does not (issue 17, first visit speed).
 */
export { deviceAbilities, loadDevice, resolveShortUuid } from "./features/devices/data.ts";
export { fleetAbilities, isOsCatalogueFleet, loadFleet } from "./features/fleet-access/data.ts";
export { organizationCan } from "./features/orgs/access.ts";
export { loadMyOrgRole, loadOrganization } from "./features/orgs/data.ts";
export { isCommitPrefix, loadRelease, resolveCommitPrefix } from "./features/releases/data.ts";
export { releaseAbilities } from "./features/releases/model.ts";
