import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CliError } from "./errors.ts";

/** The API a fresh checkout runs (`npm start`), used until `flotilla login --api` names another. */
export const DEFAULT_API_URL = "http://localhost:8081";

/** What `flotilla login` keeps: the API and its token (a session token or an API key). */
export interface CliConfig {
  apiUrl: string;
  token?: string;
}

type Env = Record<string, string | undefined>;

/** `$FLOTILLA_CONFIG_DIR`, else `~/.flotilla`. */
export function configDir(env: Env): string {
  return env.FLOTILLA_CONFIG_DIR || path.join(os.homedir(), ".flotilla");
}

export const configFile = (env: Env) => path.join(configDir(env), "config.json");

/** The saved configuration, or null when there is none. A broken file is an error naming it. */
export function readConfig(env: Env): CliConfig | null {
  const file = configFile(env);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new CliError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON: delete it and run flotilla login`);
  }
  const value = parsed as Partial<CliConfig> | null;
  if (!value || typeof value.apiUrl !== "string" || (value.token !== undefined && typeof value.token !== "string")) {
    throw new CliError(`${file} is not a Flotilla CLI configuration: delete it and run flotilla login`);
  }
  return { apiUrl: value.apiUrl, ...(value.token ? { token: value.token } : {}) };
}

/** Writes the configuration readable by its owner only (directory 0700, file 0600), atomically. */
export function writeConfig(env: Env, config: CliConfig): string {
  const dir = configDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = configFile(env);
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temporary, 0o600);
  fs.renameSync(temporary, file);
  return file;
}

/**
 * The API and token a command uses: `FLOTILLA_TOKEN` (with `FLOTILLA_API_URL`, else the saved
 * API) for scripts and CI, else the saved login. Null when there is no token.
 */
export function currentLogin(env: Env): { apiUrl: string; token: string; fromEnv: boolean } | null {
  const saved = readConfig(env);
  if (env.FLOTILLA_TOKEN) {
    const apiUrl = (env.FLOTILLA_API_URL || saved?.apiUrl || DEFAULT_API_URL).replace(/\/+$/, "");
    return { apiUrl, token: env.FLOTILLA_TOKEN, fromEnv: true };
  }
  if (!saved?.token) return null;
  return { apiUrl: saved.apiUrl, token: saved.token, fromEnv: false };
}
