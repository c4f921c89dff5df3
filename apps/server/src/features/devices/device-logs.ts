/**
 * Device logs as the log stream delivers them (docs/device-protocol.md "Logs"): the last lines
 * of each device in a bounded ring, and listeners for live lines. [operate] persists them and
 * serves the reading endpoints; this module only holds and hands them on.
 */

export const MAX_LOG_LINE_LENGTH = 10_000;
export const LOG_LINES_PER_DEVICE = 1000;
/** Devices whose lines are held; the least recently written go first. */
const MAX_DEVICES = 20_000;

export type DeviceLogLine = {
  message: string;
  timestamp: number;
  createdAt: number;
  isSystem: boolean;
  isStdErr: boolean;
  serviceId: number | null;
};

type Listener = (deviceId: number, lines: readonly DeviceLogLine[]) => void;

/** A log line as the agent sends it, bounded and typed; undefined when it is not one. */
export function parseLogLine(raw: unknown, now: number): DeviceLogLine | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const line = raw as Record<string, unknown>;
  if (typeof line.message !== "string") return undefined;
  const timestamp = typeof line.timestamp === "number" && Number.isFinite(line.timestamp) ? line.timestamp : now;
  const serviceId = typeof line.serviceId === "number" && Number.isSafeInteger(line.serviceId) ? line.serviceId : null;
  return {
    message: line.message.slice(0, MAX_LOG_LINE_LENGTH),
    timestamp,
    createdAt: now,
    isSystem: line.isSystem === true,
    isStdErr: line.isStdErr === true,
    serviceId,
  };
}

export function createDeviceLogs() {
  const rings = new Map<number, DeviceLogLine[]>();
  const listeners = new Set<Listener>();
  return {
    append(deviceId: number, lines: readonly DeviceLogLine[]) {
      if (lines.length === 0) return;
      const ring = rings.get(deviceId) ?? [];
      rings.delete(deviceId);
      if (rings.size >= MAX_DEVICES) {
        const oldest = rings.keys().next().value;
        if (oldest !== undefined) rings.delete(oldest);
      }
      ring.push(...lines);
      if (ring.length > LOG_LINES_PER_DEVICE) ring.splice(0, ring.length - LOG_LINES_PER_DEVICE);
      rings.set(deviceId, ring);
      for (const listener of listeners) listener(deviceId, lines);
    },
    /** The last `count` lines of a device, oldest first. */
    recent(deviceId: number, count = LOG_LINES_PER_DEVICE): DeviceLogLine[] {
      const ring = rings.get(deviceId) ?? [];
      return count <= 0 ? [] : ring.slice(-count);
    },
    clear(deviceId: number) {
      rings.delete(deviceId);
    },
    /** Live lines of every device; returns the unsubscribe function. */
    subscribe(listener: Listener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type DeviceLogs = ReturnType<typeof createDeviceLogs>;
