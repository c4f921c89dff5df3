import { isSshPublicKey } from "@flotilla/domain";
import { eq } from "drizzle-orm";
import type { Orm } from "../../db/index.ts";
import { user_public_key } from "../../db/schema/index.ts";
import { FlotillaError } from "../../errors.ts";

/** The list of a code-host user's public keys (e.g. https://github.com/{user}.keys): small, text, quick. */
export const SSH_IMPORT_TIMEOUT_MS = 5000;
export const SSH_IMPORT_MAX_BYTES = 100 * 1024;

/** `type base64` without the comment: two lines with the same key are the same key. */
const keyIdentity = (line: string) => line.trim().split(/\s+/).slice(0, 2).join(" ");

async function fetchKeyList(url: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(SSH_IMPORT_TIMEOUT_MS), redirect: "follow" });
  } catch {
    throw new FlotillaError("bad_request", "The key list could not be fetched from this URL.");
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new FlotillaError(
      "bad_request",
      `The key list could not be fetched: the server answered ${response.status}.`,
    );
  }
  const type = response.headers.get("content-type") ?? "text/plain";
  if (!type.startsWith("text/plain")) {
    await response.body?.cancel();
    throw new FlotillaError("bad_request", "The key list must be plain text, one key a line.");
  }
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = reader ? await reader.read() : { done: true, value: undefined };
      if (done) break;
      size += value.byteLength;
      if (size > SSH_IMPORT_MAX_BYTES) {
        await reader?.cancel();
        throw new FlotillaError("bad_request", "The key list is larger than 100 kB.");
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof FlotillaError) throw error;
    throw new FlotillaError("bad_request", "The key list could not be fetched from this URL.");
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Imports the SSH public keys listed at `url` (spec 1 §2.4): valid keys not saved yet are added
 * (titled with their comment, or after the host), keys the user already has are skipped, other
 * lines are ignored. No valid key at all is a 400.
 */
export async function importSshKeys(orm: Orm, userId: number, url: string) {
  const host = new URL(url).hostname;
  const lines = (await fetchKeyList(url))
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const valid = lines.filter(isSshPublicKey);
  if (valid.length === 0) throw new FlotillaError("bad_request", "No SSH public key was found at this URL.");
  const saved = await orm
    .select({ public_key: user_public_key.public_key })
    .from(user_public_key)
    .where(eq(user_public_key.user, userId));
  const known = new Set(saved.map((row) => keyIdentity(row.public_key)));
  const fresh: { user: number; title: string; public_key: string }[] = [];
  for (const line of valid) {
    const identity = keyIdentity(line);
    if (known.has(identity)) continue;
    known.add(identity);
    const comment = line.split(/\s+/).slice(2).join(" ");
    fresh.push({ user: userId, title: comment || `${host} key ${fresh.length + 1}`, public_key: line });
  }
  if (fresh.length > 0) await orm.insert(user_public_key).values(fresh);
  return { added: fresh.length, skipped: valid.length - fresh.length, invalid: lines.length - valid.length };
}
