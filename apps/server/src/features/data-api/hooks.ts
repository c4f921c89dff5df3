import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { CREDENTIAL_RESOURCES, credentialWriteHooks } from "../../lib/delegation.ts";
import { model } from "../../model/index.ts";
import type { Hooks, ResourceHooks } from "../../odata/index.ts";
import { userHooks } from "../account/deletion.ts";
import { AUDITED_RESOURCES, auditHooks } from "../audit/hooks.ts";
import { creditBundleHooks } from "../billing/credits.ts";
import { paymentProviderFor } from "../billing/provider.ts";
import { deviceKeyWriteHooks } from "../devices/device-key-hooks.ts";
import { withTargetStateInvalidation } from "../devices/invalidation.ts";
import { deviceReportedFieldHooks } from "../devices/reported-fields.ts";
import { deviceConfigVariableHooks, deviceSettingsHooks, frozenDeviceChildHooks } from "../devices/settings-hooks.ts";
import { applicationHooks, deviceHooks } from "../fleets/hooks.ts";
import { teamApplicationAccessHooks, userApplicationMembershipHooks } from "../fleets/membership-hooks.ts";
import { identityProviderHooks, identityProviderMembershipHooks } from "../identity/hooks.ts";
import { oauthApplicationAuthorizationHooks, oauthApplicationHooks } from "../identity/oauth.ts";
import { applicationInviteHooks, organizationInviteHooks } from "../invitations/service.ts";
import {
  organizationHooks,
  organizationMembershipHooks,
  teamHooks,
  teamMembershipHooks,
} from "../organizations/hooks.ts";
import { organizationLogoWriteHooks, removeOrganizationLogos } from "../organizations/logo.ts";
import { supervisorReleaseHooks } from "../os-updates/supervisor-hooks.ts";
import { imageLocationHooks, releaseImageLocationHooks } from "../releases/client-releases.ts";
import { devicePinHooks, fleetReleaseHooks, releaseAssetHooks, releaseHooks } from "../releases/hooks.ts";
import { releasePolicyHooks } from "../rollouts/hooks.ts";
import { fleetRepositoryHooks } from "../ssh-gateway/git-repositories.ts";
import { sshKeyHooks } from "../ssh-keys/hooks.ts";
import { removeOrganizationSupportFiles } from "../support/files.ts";
import { tagKeyHooks } from "../tags/hooks.ts";
import { chainHooks, VARIABLE_RESOURCES, variableHooks } from "../variables/hooks.ts";
import { triggerUpdates } from "../variables/update-trigger.ts";
import { enqueueReleaseEvents, releaseEventOf } from "../webhooks/events.ts";

/**
 * Every resource's hooks, from the feature folders, by canonical resource name. Invitations mail
 * their links, so the hooks are built with the mailer and the configuration; writes that change
 * a device's target state drop its cached copy (DESIGN §8).
 */
export function createHooks(ctx: Pick<AppContext, "config" | "mail" | "devices">): Hooks {
  if (organizationHooks.afterDelete) throw new Error("hooks: organization afterDelete is defined twice");
  const hooks: Record<string, ResourceHooks | undefined> = {
    application: chainHooks(
      chainHooks(applicationHooks, fleetReleaseHooks(ctx.devices)),
      fleetRepositoryHooks(ctx.config.dataDir),
    ),
    // A device key's own writes are narrowed to its fields first (device-key-hooks.ts); the
    // reported fields come next, as `is_online` is taken out of the body there.
    device: [
      deviceReportedFieldHooks(ctx.devices),
      merge(deviceHooks, deviceSettingsHooks),
      devicePinHooks(ctx.devices),
      supervisorReleaseHooks(ctx.devices),
    ].reduce(chainHooks, deviceKeyWriteHooks),
    device__has__config_var_name: deviceConfigVariableHooks,
    device_tag: chainHooks(frozenDeviceChildHooks("device_tag"), tagKeyHooks("device_tag")),
    application_tag: tagKeyHooks("application_tag"),
    device__has__env_var_name: frozenDeviceChildHooks("device_environment_variable"),
    organization: {
      ...chainHooks(organizationHooks, organizationLogoWriteHooks(ctx.config.dataDir)),
      afterDelete({ ids, afterCommit }) {
        afterCommit(() =>
          Promise.all([
            removeOrganizationLogos(ctx.config.dataDir, ids),
            removeOrganizationSupportFiles(ctx.config.dataDir, ids),
          ]).then(() => undefined),
        );
      },
    },
    user__is_member_of__organization: organizationMembershipHooks,
    organization_membership_tag: tagKeyHooks("organization_membership_tag"),
    team: teamHooks,
    user__is_member_of__team: teamMembershipHooks,
    user__is_member_of__application: userApplicationMembershipHooks,
    team_application_access: teamApplicationAccessHooks,
    invitee__is_invited_to__organization: organizationInviteHooks(ctx),
    invitee__is_invited_to__application: applicationInviteHooks(ctx),
    release: releaseHooks(ctx.devices, ctx.config.dataDir),
    release_tag: tagKeyHooks("release_tag"),
    release__has__asset_key: releaseAssetHooks(ctx.config.dataDir),
    image: imageLocationHooks(ctx.config.registry?.host),
    image__is_part_of__release: releaseImageLocationHooks,
    release_policy: releasePolicyHooks,
    user__has__public_key: sshKeyHooks,
    user: userHooks,
    credit_bundle: creditBundleHooks(paymentProviderFor(ctx.config)),
    identity_provider: identityProviderHooks,
    organization__is_authorized_by__identity_provider: identityProviderMembershipHooks,
    oauth_application: oauthApplicationHooks,
    oauth_application_authorization: oauthApplicationAuthorizationHooks,
  };
  // Credentials are never written with an OAuth application's token; refused before anything else.
  for (const name of CREDENTIAL_RESOURCES) {
    const own = hooks[name];
    hooks[name] = own ? chainHooks(credentialWriteHooks, own) : credentialWriteHooks;
  }
  // Variables' name and value rules (spec 2 §5), after the resource's own checks (a frozen device).
  for (const name of Object.keys(VARIABLE_RESOURCES)) {
    hooks[name] = chainHooks(
      hooks[name],
      variableHooks(name, ctx.config.variableRules, (devices) => triggerUpdates(ctx.devices.relay, devices)),
    );
  }
  // Checked device keys are trusted from memory (lib/authenticate.ts): a changed or deleted key,
  // or a deleted device, makes every instance forget them.
  const forgetKeys = ({ afterCommit }: { afterCommit(task: () => void): void }) =>
    afterCommit(() => ctx.devices.dropDeviceKeys());
  hooks.api_key = chainHooks(hooks.api_key, {
    afterUpdate: forgetKeys,
    beforeDelete(args) {
      // A key never revokes itself (balena's named-user key cannot either): the caller would be
      // left with nothing to sign in with. `balena api-key revoke` shows this text.
      const inUse = args.auditActor?.apiKey;
      if (inUse !== undefined && args.ids.includes(inUse)) {
        throw new FlotillaError(
          "forbidden",
          "This API key is the one in use and cannot revoke itself: sign in with your password (or another key) to revoke it.",
        );
      }
      forgetKeys(args);
    },
  });
  hooks.device = chainHooks(hooks.device, { beforeDelete: forgetKeys });
  // Releases that end through the data API (balena deploy's PATCH of status) tell webhooks.
  hooks.release = chainHooks(hooks.release, {
    async afterUpdate({ tx, ids, body }) {
      const event = releaseEventOf(body.status);
      if (event) await enqueueReleaseEvents(tx, ids, event);
    },
  });
  // The audit log, last: an entry is written only once the resource's own checks passed.
  for (const name of Object.keys(AUDITED_RESOURCES)) {
    const audit = auditHooks(name);
    if (audit) hooks[name] = chainHooks(hooks[name], audit);
  }
  return withTargetStateInvalidation(model, hooks, (change) => ctx.devices.invalidate(change));
}

/** Two features' hooks of one resource; each stage may be defined by one of them only. */
function merge(a: ResourceHooks, b: ResourceHooks): ResourceHooks {
  for (const stage of Object.keys(b)) {
    if (stage in a) throw new Error(`hooks: ${stage} is defined twice`);
  }
  return { ...a, ...b };
}
