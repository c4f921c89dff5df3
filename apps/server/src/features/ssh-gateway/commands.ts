import { TERMINAL_HOST_TARGET } from "@flotilla/domain";

/**
 * What an SSH client asks the gateway for, in balena's gateway grammar (docs/balena-cli.md "SSH
 * gateway"): `host {uuid}` opens the host OS shell, `host {uuid} {command…}` types a command
 * into it, `enter {uuid} {container}` opens a service's shell. `balena ssh {uuid} {service}`
 * first lists the device's containers with `host {uuid} <engine> ps --format "{{.ID}} {{.Names}}"`
 * and then enters the one of the service: the gateway answers that listing itself, with the
 * service name as the container id, so no host access is needed to reach a service. `{uuid}
 * [{service}]` is accepted too, for people typing the command by hand.
 */
export type GatewayCommand =
  | { kind: "shell"; uuid: string; target: string; command: string | undefined }
  | { kind: "list-containers"; uuid: string }
  | { kind: "invalid"; message: string };

const UUID = /^[0-9a-fA-F]{7,62}$/;
/** The container listing balena-cli runs on the host to find a service's container. */
const CONTAINER_LISTING = /^\S*(balena|docker)\S*"?\s+ps\s+--format\s+"?\{\{\.ID\}\}\s+\{\{\.Names\}\}"?\s*$/;
/** The command substitution balena-cli uses to pick the engine binary. */
const ENGINE_PICKER = /^"?\$\(if \[ -f \/usr\/bin\/balena \]; then echo "balena"; else echo "docker"; fi\)"?/;

export const USAGE =
  "Usage: ssh <user>@<gateway> host <device uuid> [command] | enter <device uuid> <service> | <device uuid> [service]";

export function parseGatewayCommand(line: string | undefined): GatewayCommand {
  const text = (line ?? "").trim();
  if (text === "") return { kind: "invalid", message: `No device named. ${USAGE}` };
  const [first = "", second = "", ...rest] = text.split(/\s+/);
  const remainder = (skip: number) => text.replace(new RegExp(`^(\\S+\\s+){${skip}}`), "").trim();
  if (first === "host" || first === "enter") {
    if (!UUID.test(second)) return { kind: "invalid", message: `Not a device uuid: ${second || "(none)"}. ${USAGE}` };
    const uuid = second.toLowerCase();
    if (first === "host") {
      const command = rest.length > 0 ? remainder(2) : undefined;
      if (command && CONTAINER_LISTING.test(command.replace(ENGINE_PICKER, "balena"))) {
        return { kind: "list-containers", uuid };
      }
      return { kind: "shell", uuid, target: TERMINAL_HOST_TARGET, command };
    }
    const [container, ...command] = rest;
    if (!container) return { kind: "invalid", message: `No service named. ${USAGE}` };
    return { kind: "shell", uuid, target: container, command: command.length > 0 ? remainder(3) : undefined };
  }
  if (UUID.test(first) && rest.length === 0) {
    return { kind: "shell", uuid: first.toLowerCase(), target: second || TERMINAL_HOST_TARGET, command: undefined };
  }
  return { kind: "invalid", message: `Unknown command: ${first}. ${USAGE}` };
}
