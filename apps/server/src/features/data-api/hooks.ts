import type { AppContext } from "../../context.ts";
import type { Hooks } from "../../odata/index.ts";
import { userHooks } from "../account/deletion.ts";
import { applicationHooks, deviceHooks } from "../fleets/hooks.ts";
import { teamApplicationAccessHooks, userApplicationMembershipHooks } from "../fleets/membership-hooks.ts";
import { applicationInviteHooks, organizationInviteHooks } from "../invitations/service.ts";
import {
  organizationHooks,
  organizationMembershipHooks,
  teamHooks,
  teamMembershipHooks,
} from "../organizations/hooks.ts";
import { removeOrganizationLogos } from "../organizations/logo.ts";
import { releaseHooks } from "../releases/hooks.ts";
import { sshKeyHooks } from "../ssh-keys/hooks.ts";

/**
 * Every resource's hooks, from the feature folders, by canonical resource name. Invitations mail
 * their links, so the hooks are built with the mailer and the configuration.
 */
export function createHooks(ctx: Pick<AppContext, "config" | "mail">): Hooks {
  if (organizationHooks.afterDelete) throw new Error("hooks: organization afterDelete is defined twice");
  return {
    application: applicationHooks,
    device: deviceHooks,
    organization: {
      ...organizationHooks,
      afterDelete({ ids, afterCommit }) {
        afterCommit(() => removeOrganizationLogos(ctx.config.dataDir, ids));
      },
    },
    user__is_member_of__organization: organizationMembershipHooks,
    team: teamHooks,
    user__is_member_of__team: teamMembershipHooks,
    user__is_member_of__application: userApplicationMembershipHooks,
    team_application_access: teamApplicationAccessHooks,
    invitee__is_invited_to__organization: organizationInviteHooks(ctx),
    invitee__is_invited_to__application: applicationInviteHooks(ctx),
    release: releaseHooks,
    user__has__public_key: sshKeyHooks,
    user: userHooks,
  };
}
