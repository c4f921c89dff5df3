/** Where a command writes and what it reads from its environment (the process, or a test). */
export interface Io {
  /** A line of results (stdout). */
  out(text: string): void;
  /** A line of errors and progress (stderr). */
  err(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
}

export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The command's own help (`flotilla help push`, `flotilla push --help`). */
  usage: string;
  run(args: string[], io: Io): Promise<number>;
}

/** `1536` → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
