/**
 * Which CPU architectures a device of one architecture runs, as balena decides it for moves
 * (balena-sdk `os.isArchitectureCompatibleWith`): its own, and on 64-bit ARM also 32-bit ARM.
 */
const ALSO_RUNS: Readonly<Record<string, readonly string[]>> = {
  aarch64: ["armv7hf", "rpi"],
  armv7hf: ["rpi"],
};

/** May a device of `device` architecture be in a fleet of `fleet` architecture? */
export function runsArchitecture(device: string | null | undefined, fleet: string | null | undefined): boolean {
  if (!device || !fleet) return device === fleet;
  return device === fleet || (ALSO_RUNS[device] ?? []).includes(fleet);
}
