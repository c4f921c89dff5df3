import crypto from "node:crypto";
import { and, eq, gt, isNull, or } from "drizzle-orm";
import type { Orm } from "../../db/index.ts";
import { api_key } from "../../db/schema/index.ts";

export type ApiKeyRole = "user" | "provisioning-api-key" | "device-api-key";

/** Keys are random and long; only their SHA-256 is stored, so a database leak leaks no key. */
export const hashApiKey = (key: string) => crypto.createHash("sha256").update(key).digest("hex");
export const generateApiKey = () => crypto.randomBytes(24).toString("base64url");

export async function createApiKey(
  orm: Orm,
  input: {
    actor: number;
    role: ApiKeyRole;
    name?: string | null;
    description?: string | null;
    expiryDate?: Date | null;
    key?: string;
  },
): Promise<string> {
  const key = input.key ?? generateApiKey();
  await orm.insert(api_key).values({
    key_hash: hashApiKey(key),
    is_of__actor: input.actor,
    role: input.role,
    name: input.name ?? null,
    description: input.description ?? null,
    expiry_date: input.expiryDate ?? null,
  });
  return key;
}

/** The live (not expired) key with this value, if any. */
export async function findApiKey(orm: Orm, key: string) {
  const [found] = await orm
    .select()
    .from(api_key)
    .where(
      and(eq(api_key.key_hash, hashApiKey(key)), or(isNull(api_key.expiry_date), gt(api_key.expiry_date, new Date()))),
    )
    .limit(1);
  return found;
}
