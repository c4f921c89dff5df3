/**
 * Device tunnels (docs/device-protocol.md "Tunnels"): a TCP connection from a user to a port on
 * the device (`balena device tunnel`, `ssh -L` through the SSH gateway), carried over the
 * device's cloudlink socket. The agent connects to 127.0.0.1:{port} on the device.
 */

/** Server ↔ agent frames; `data` is base64. */
export type TunnelFrame =
  | { type: "tunnel-open"; tunnel: string; port: number }
  | { type: "tunnel-data"; tunnel: string; data: string }
  /** From the agent: `reason` `refused` (nothing listens), `too_many_tunnels`, `unsupported` or `closed`. */
  | { type: "tunnel-close"; tunnel: string; reason?: string; message?: string };

/** Open tunnels per device (the agent refuses more). */
export const MAX_TUNNELS_PER_DEVICE = 16;
/** Bytes per tunnel-data frame (before base64). */
export const MAX_TUNNEL_CHUNK_BYTES = 32 * 1024;

/** A TCP port number a tunnel may reach. */
export const isTunnelPort = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535;
