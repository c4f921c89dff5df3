import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { UsageError } from "./errors.ts";

/**
 * A command's options and positionals (node:util parseArgs, strict): an unknown option or a
 * missing value is a UsageError with parseArgs' own words, without its positional hint.
 */
export function parseCommand<const O extends ParseArgsOptionsConfig>(
  args: string[],
  options: O,
  positionals: { min: number; max: number; names: string },
) {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ""));
  }
  if (parsed.positionals.length < positionals.min) throw new UsageError(`missing ${positionals.names}`);
  if (parsed.positionals.length > positionals.max) {
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals.max]}"`);
  }
  return parsed;
}

/** A string option that must not be empty when given (`--note ""` is refused, not ignored). */
export function nonEmpty(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError(`--${name} needs a value`);
  return value;
}

/** An `--api` value: an http(s) URL, without a trailing slash. */
export function apiUrlOption(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--api must be an http(s) URL, got "${value}"`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password) {
    throw new UsageError(`--api must be an http(s) URL, got "${value}"`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

/** `--asset FILE[:KEY]`: the key defaults to the file's base name. A drive letter (`C:\…`) is no key. */
export function assetOption(value: string): { file: string; key: string } {
  const colon = value.lastIndexOf(":");
  let file = value;
  let key: string | undefined;
  const driveLetter = colon === 1 && /^[A-Za-z]:[\\/]/.test(value);
  if (colon !== -1 && !driveLetter && !/[\\/]/.test(value.slice(colon + 1))) {
    file = value.slice(0, colon);
    key = value.slice(colon + 1);
  }
  if (file === "") throw new UsageError(`--asset needs a file, got "${value}"`);
  key ??= file.split(/[\\/]/).pop() ?? file;
  if (key === "") throw new UsageError(`--asset needs a key after ":", got "${value}"`);
  return { file, key };
}
