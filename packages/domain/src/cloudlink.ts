/**
 * What the server may ask a device over cloudlink (docs/device-protocol.md "Cloudlink"): the
 * supervisor actions balena-sdk relays, and the device actions service's checks and diagnostics.
 * Shared by the server's relay and the agent.
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
  // Health checks and diagnostics (diagnostics.ts): read the last report, or start a run.
  "checks",
  "diagnose",
  // Host OS update (os-updates.ts): `{target_version}`; the device answers at once and updates.
  "resinhup",
] as const;
export type CloudlinkAction = (typeof CLOUDLINK_ACTIONS)[number];
