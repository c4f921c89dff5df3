import type { Queryable } from "../../db/index.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { mayDo } from "../data-api/actions.ts";
import { visibleTerminalDevice } from "../terminal/access.ts";
import type { TerminalDevice } from "../terminal/queries.ts";

/**
 * Who may open a tunnel to a device: a tunnel reaches any port of the device's host network,
 * so it takes what a host OS terminal takes (`device.ssh-host`). Devices the caller cannot see
 * are "not found".
 */
export async function tunnelDevice(
  db: Pick<Queryable, "query">,
  caller: Caller,
  uuid: string,
): Promise<TerminalDevice | "not_found" | "forbidden"> {
  const device = await visibleTerminalDevice(db, caller, uuid.toLowerCase());
  if (!device) return "not_found";
  if (!(await mayDo(db, caller, "device.ssh-host", { device: device.id }))) return "forbidden";
  return device;
}

/** `{uuid}` or balena's `{uuid}.balena` host name of a device, with a port. */
export function tunnelTarget(host: string, port: number | string): { uuid: string; port: number } | undefined {
  const uuid = /^([0-9a-f]{7,62})(\.balena)?$/i.exec(host)?.[1];
  const number = typeof port === "number" ? port : /^\d{1,5}$/.test(port) ? Number(port) : Number.NaN;
  if (!uuid || !Number.isInteger(number) || number < 1 || number > 65535) return undefined;
  return { uuid: uuid.toLowerCase(), port: number };
}
