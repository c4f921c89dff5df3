import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config.ts";

/**
 * The token-signing secret: FLOTILLA_SECRET when set (at least 32 bytes, checked by the config),
 * otherwise generated on first start and kept in the data directory, readable by the owner only.
 */
export function loadSecret(config: Pick<Config, "secret" | "dataDir">): Uint8Array {
  if (config.secret) return new TextEncoder().encode(config.secret);
  const file = path.join(config.dataDir, "secret.key");
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    // `wx` fails if the file exists, so two instances sharing a data dir keep the first secret.
    fs.writeFileSync(file, crypto.randomBytes(48).toString("base64url"), { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const secret = fs.readFileSync(file, "utf8").trim();
  if (Buffer.byteLength(secret) < 32) {
    throw new Error(`The secret in ${file} is shorter than 32 bytes; delete it to generate a new one`);
  }
  return new TextEncoder().encode(secret);
}
