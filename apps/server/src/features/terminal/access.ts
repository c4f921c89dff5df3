import { hostOsAccessSupported, TERMINAL_HOST_TARGET, type TerminalCloseReason } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { mayDo } from "../data-api/actions.ts";
import { runningServices, type TerminalDevice, terminalDevice } from "./queries.ts";

type Db = Pick<Queryable, "query">;

export const DEVICE_UUID = /^[0-9a-f]{7,62}$/;
/** A service name as the composition allows it; anything else is no service of the device. */
export const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** The device of a terminal, when the caller may see it (others are "not found", never "forbidden"). */
export async function visibleTerminalDevice(db: Db, caller: Caller, uuid: string): Promise<TerminalDevice | undefined> {
  const device = DEVICE_UUID.test(uuid) ? await terminalDevice(db, uuid) : undefined;
  if (!device || !(await mayDo(db, caller, "device.read", { device: device.id }))) return undefined;
  return device;
}

/**
 * Why this caller may not open this target on this device, or undefined when it may: the same
 * rules for the web terminal and the SSH gateway (spec 2 §6, §7).
 */
export async function terminalRefusal(
  db: Db,
  caller: Caller,
  device: TerminalDevice,
  target: string,
): Promise<TerminalCloseReason | undefined> {
  if (target === TERMINAL_HOST_TARGET) {
    if (!(await mayDo(db, caller, "device.ssh-host", { device: device.id }))) return "forbidden";
    if (!hostOsAccessSupported(device.os_version)) return "host_os_not_supported";
    return undefined;
  }
  if (!(await mayDo(db, caller, "device.ssh", { device: device.id }))) return "forbidden";
  if (device.is_in_local_mode) return "local_mode";
  if (!SERVICE_NAME.test(target) || !(await runningServices(db, device.id)).includes(target)) {
    return "service_not_running";
  }
  return undefined;
}
