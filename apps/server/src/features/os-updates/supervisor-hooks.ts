import { isSelectableSupervisorRelease, supervisorUpdateBlocked } from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";
import { requireAction } from "../data-api/actions.ts";
import type { DeviceServices } from "../devices/services.ts";
import { triggerUpdates } from "../variables/update-trigger.ts";
import { devicesForUpdate, supervisorRelease } from "./catalogue.ts";

/**
 * Supervisor updates (spec 2 §5, §6, §7 "set supervisor release (device ids, release id)"):
 * balena-sdk's device.setSupervisorRelease writes `should_be_managed_by__release` through the
 * data API. The release must be a selectable release of the public supervisor fleet of the
 * device's CPU architecture ("supervisor release not found"), ESR devices are refused
 * (warnings.cannot_update_esr_supervisor), the caller needs
 * device.actions-proxy-supervisorupgrade (platform administrators hold it nowhere: they act on
 * another user's device only by logging in as them, spec 2 §6). Then the devices are woken to
 * fetch the target state that now carries the supervisor app.
 */
export function supervisorReleaseHooks(devices: Pick<DeviceServices, "relay">): ResourceHooks {
  return {
    async beforeUpdate({ tx, ids, body, actorId }) {
      const value = body.should_be_managed_by__release;
      if (value === undefined) return;
      if (actorId === undefined) throw new FlotillaError("forbidden");
      for (const id of ids) {
        await requireAction(tx, { actor: actorId, globalRoles: [] }, "device.actions-proxy-supervisorupgrade", {
          device: id,
        });
      }
      // Unsetting returns the device to the supervisor it runs.
      if (value === null) return;
      const release = await supervisorRelease(tx, Number(value));
      if (!release || !isSelectableSupervisorRelease(release)) {
        throw new FlotillaError("supervisor_release_not_found");
      }
      for (const device of await devicesForUpdate(tx, ids)) {
        if (supervisorUpdateBlocked(device.os_version)) throw new FlotillaError("cannot_update_esr_supervisor");
        if (device.architecture !== release.architecture) throw new FlotillaError("supervisor_release_not_found");
      }
    },
    afterUpdate({ ids, body, afterCommit }) {
      if (body.should_be_managed_by__release === undefined) return;
      afterCommit(() => triggerUpdates(devices.relay, ids));
    },
  };
}
