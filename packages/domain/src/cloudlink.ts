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

/**
 * Each cloudlink connect names itself `<run>.<n>` in this header: `run` is the agent's client
 * (random hex), `n` counts its connects. A handshake the agent gave up on can still reach the
 * server after the next one did (a busy server's queue); the server refuses the older attempt
 * instead of letting it replace the live socket.
 */
export const CLOUDLINK_ATTEMPT_HEADER = "x-cloudlink-attempt";
export type CloudlinkAttempt = { run: string; n: number };

/** The header's attempt; undefined when absent or malformed (an agent without it: arrival order decides). */
export function parseCloudlinkAttempt(value: unknown): CloudlinkAttempt | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^([0-9a-f]{1,32})\.([0-9]{1,15})$/.exec(value);
  return match ? { run: match[1] as string, n: Number(match[2]) } : undefined;
}
