import type { Hooks } from "../../odata/index.ts";
import { userHooks } from "../account/deletion.ts";
import { applicationHooks } from "../fleets/hooks.ts";
import { organizationHooks } from "../organizations/hooks.ts";
import { releaseHooks } from "../releases/hooks.ts";
import { sshKeyHooks } from "../ssh-keys/hooks.ts";

/** Every resource's hooks, from the feature folders, by canonical resource name. */
export const hooks: Hooks = {
  application: applicationHooks,
  organization: organizationHooks,
  release: releaseHooks,
  user__has__public_key: sshKeyHooks,
  user: userHooks,
};
