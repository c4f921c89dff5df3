import fs from "node:fs";
import path from "node:path";
import type { Identity } from "./protocol/register.ts";

export const DEFAULT_STATE_FILE = "flotilla-agent.json";

/** A problem the user can fix (bad flags, a missing or broken state file): printed without a stack. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

function isIdentity(value: unknown): value is Identity {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.uuid === "string" &&
    /^[0-9a-f]{32}$/.test(v.uuid) &&
    typeof v.deviceKey === "string" &&
    typeof v.deviceId === "number" &&
    typeof v.apiUrl === "string" &&
    typeof v.fleetId === "number" &&
    (v.registryEndpoint === undefined || typeof v.registryEndpoint === "string")
  );
}

export function readIdentity(file: string): Identity | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new UsageError(`cannot read the state file ${file}: ${(error as Error).message}`, 1);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`the state file ${file} is not JSON; remove it and register again`, 1);
  }
  if (!isIdentity(parsed)) {
    throw new UsageError(`the state file ${file} does not hold a device identity; remove it and register again`, 1);
  }
  return { ...parsed, deviceType: parsed.deviceType ?? "" };
}

/** Writes atomically (temporary file, rename) with mode 0600: the device key is a secret. */
export function writeJsonPrivate(file: string, value: unknown) {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temporary, 0o600);
  fs.renameSync(temporary, file);
}

export function writeIdentity(file: string, identity: Identity) {
  writeJsonPrivate(file, identity);
}

/** A simulated device as `--state-dir` keeps it: its identity and what it runs after an update. */
export type SimulatedIdentity = Identity & { osVersion?: string; supervisorVersion?: string };

/** The simulator's devices, one file for all of them in `--state-dir`. */
export function readSimulatedIdentities(file: string): SimulatedIdentity[] {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { devices?: unknown };
    return Array.isArray(parsed.devices) ? parsed.devices.filter(isIdentity) : [];
  } catch {
    return [];
  }
}
