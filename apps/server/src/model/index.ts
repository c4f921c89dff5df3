import { createModel } from "../odata/model.ts";
import { accountResources } from "./accounts.ts";
import { billingResources } from "./billing.ts";
import { deviceResources } from "./devices.ts";
import { fleetResources } from "./fleets.ts";
import { identityResources } from "./identity.ts";
import { organizationResources } from "./organizations.ts";
import { releaseResources } from "./releases.ts";
import { rolloutResources } from "./rollouts.ts";

/** The data API's model: balena v7 names over Flotilla's tables. */
export const model = createModel([
  ...accountResources,
  ...organizationResources,
  ...fleetResources,
  ...deviceResources,
  ...releaseResources,
  ...rolloutResources,
  ...identityResources,
  ...billingResources,
]);
