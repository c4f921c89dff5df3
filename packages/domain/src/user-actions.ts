/**
 * User actions: what a person asks a device to do through its supervisor's API — identify,
 * restart, purge, reboot, shutdown, update and the service controls (spec 2 §4, §7 "Supervisor
 * relay"). A device reporting a supervisor older than the API generation Flotilla relays to is
 * refused with balena's 400 `{"error":"updateRequired"}` (spec 1 §8) and the keyed
 * errors.device_update_required (spec 2 §8); the dashboard names the devices to update
 * (actions_messages.user_action_denied). docs/decisions.md "User actions need supervisor 7".
 */

/** The supervisor major that serves the v1 and v2 device APIs the relay speaks (DESIGN §5). */
export const USER_ACTIONS_MIN_SUPERVISOR_MAJOR = 7;

/** The major version of a supervisor version text ("16.7.0", "v6.6.0"), or undefined when unknown. */
export function supervisorMajor(version: string | null | undefined): number | undefined {
  const major = Number(/^v?(\d+)\./.exec(version ?? "")?.[1] ?? Number.NaN);
  return Number.isFinite(major) ? major : undefined;
}

/**
 * Must this device be updated before it accepts user actions? Only a known, older supervisor
 * says so: a device that has not reported one yet is given the benefit of the doubt.
 */
export function userActionsNeedUpdate(supervisorVersion: string | null | undefined): boolean {
  const major = supervisorMajor(supervisorVersion);
  return major !== undefined && major < USER_ACTIONS_MIN_SUPERVISOR_MAJOR;
}

/** The body balena's API answers a user action with when the device needs an update first. */
export const UPDATE_REQUIRED_BODY = { error: "updateRequired" } as const;
