/**
 * What the server may ask a device over cloudlink (docs/device-protocol.md "Cloudlink"): the
 * supervisor actions balena-sdk relays. Shared by the server's relay and the agent.
 */
export const CLOUDLINK_ACTIONS = [
  "blink",
  "restart",
  "reboot",
  "shutdown",
  "purge",
  "update",
  "device",
  "start-service",
  "stop-service",
  "restart-service",
] as const;
export type CloudlinkAction = (typeof CLOUDLINK_ACTIONS)[number];
