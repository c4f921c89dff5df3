import crypto from "node:crypto";
import { fleetRolesAllowing } from "@flotilla/domain";
import { and, gt, inArray, isNull, or } from "drizzle-orm";
import type { Database, Orm } from "../../db/index.ts";
import { api_key } from "../../db/schema/index.ts";

export type ApiKeyRole = "user" | "provisioning-api-key" | "device-api-key";

/** Keys are random and long; only their SHA-256 is stored, so a database leak leaks no key. */
export const hashApiKey = (key: string) => crypto.createHash("sha256").update(key).digest("hex");
const KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * 32 letters and digits (~190 bits). No "-" or "_": a key is pasted into commands
 * (`flotilla-agent register --provisioning-key KEY`), where a leading "-" reads as an option.
 * Bytes from 248 up are skipped so every character is equally likely (248 = 4 × 62).
 */
export function generateApiKey(): string {
  let key = "";
  while (key.length < 32) {
    for (const byte of crypto.randomBytes(40)) {
      if (byte < 248 && key.length < 32) key += KEY_ALPHABET[byte % KEY_ALPHABET.length];
    }
  }
  return key;
}

type NewApiKey = {
  actor: number;
  role: ApiKeyRole;
  name?: string | null;
  description?: string | null;
  expiryDate?: Date | null;
  key?: string;
};

export async function createApiKey(orm: Orm, input: NewApiKey): Promise<string> {
  return (await createApiKeyRow(orm, input)).key;
}

/** Creates a key; its value (shown once) and row id (for the audit log). */
export async function createApiKeyRow(orm: Orm, input: NewApiKey): Promise<{ key: string; id: number }> {
  const key = input.key ?? generateApiKey();
  const [row] = await orm
    .insert(api_key)
    .values({
      key_hash: hashApiKey(key),
      is_of__actor: input.actor,
      role: input.role,
      name: input.name ?? null,
      description: input.description ?? null,
      expiry_date: input.expiryDate ?? null,
    })
    .returning({ id: api_key.id });
  if (!row) throw new Error("api_key: the insert returned no row");
  return { key, id: row.id };
}

/** The live (not expired) key with this value, if any. */
export async function findApiKey(orm: Orm, key: string) {
  const hash = hashApiKey(key);
  return (await findApiKeysByHash(orm, [hash])).get(hash);
}

/** The live keys with these hashes, by hash (the batched look-up of lib/authenticate.ts). */
export async function findApiKeysByHash(orm: Orm, hashes: readonly string[]) {
  const rows = await orm
    .select()
    .from(api_key)
    .where(
      and(inArray(api_key.key_hash, [...hashes]), or(isNull(api_key.expiry_date), gt(api_key.expiry_date, new Date()))),
    );
  return new Map(rows.map((row) => [row.key_hash, row]));
}

/** Does this actor hold a fleet role that may create API keys (provisioning and device keys)? */
export async function canCreateKeysFor(
  db: Pick<Database, "query">,
  actor: number,
  application: number,
): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM "fleet_access" WHERE application = $1 AND actor = $2 AND role = ANY($3) LIMIT 1',
    [application, actor, fleetRolesAllowing("api_key", "create")],
  );
  return rows.length > 0;
}
