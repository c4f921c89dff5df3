import { isSshPublicKey } from "@flotilla/domain";
import { eq } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import type { Orm } from "../../db/index.ts";
import { user_public_key } from "../../db/schema/index.ts";
import { FlotillaError } from "../../errors.ts";
import { type FetchAllowList, OutboundFetchError, outboundFetch, readBody } from "../../lib/outbound-fetch.ts";

/** The list of a code-host user's public keys (e.g. https://github.com/{user}.keys): small, text, quick. */
export const SSH_IMPORT_TIMEOUT_MS = 5000;
export const SSH_IMPORT_MAX_BYTES = 100 * 1024;

/** `type base64` without the comment: two lines with the same key are the same key. */
const keyIdentity = (line: string) => line.trim().split(/\s+/).slice(0, 2).join(" ");

/** The one answer to every failure to fetch the list, so the import tells nothing of what is behind a URL. */
const FETCH_FAILED = "The key list could not be fetched from this URL.";

async function fetchKeyList(url: string, allow: FetchAllowList, log: FastifyBaseLogger): Promise<string> {
  try {
    const response = await outboundFetch(url, {
      allow,
      timeoutMs: SSH_IMPORT_TIMEOUT_MS,
      maxBytes: SSH_IMPORT_MAX_BYTES,
      accept: "text/plain",
    });
    if (response.status < 200 || response.status > 299) {
      response.body.destroy();
      throw new OutboundFetchError(`answered ${response.status}`);
    }
    if (!(response.contentType || "text/plain").startsWith("text/plain")) {
      response.body.destroy();
      throw new OutboundFetchError(`content type ${response.contentType}`);
    }
    return (await readBody(response)).toString("utf8");
  } catch (error) {
    if (!(error instanceof OutboundFetchError)) throw error;
    log.warn({ url, detail: error.detail }, "SSH key import: the key list could not be fetched");
    throw new FlotillaError("bad_request", FETCH_FAILED);
  }
}

/**
 * Imports the SSH public keys listed at `url` (spec 1 §2.4): valid keys not saved yet are added
 * (titled with their comment, or after the host), keys the user already has are skipped, other
 * lines are ignored. No valid key at all is a 400.
 */
export async function importSshKeys(
  orm: Orm,
  userId: number,
  url: string,
  fetching: { allow: FetchAllowList; log: FastifyBaseLogger },
) {
  const host = new URL(url).hostname;
  const lines = (await fetchKeyList(url, fetching.allow, fetching.log))
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
