import { hash, verify } from "@node-rs/argon2";
import { FlotillaError } from "../../errors.ts";

// argon2id with the OWASP minimum (19 MiB, 2 passes): ~20 ms here, slow enough for guessing.
const OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most this many argon2 computations run at once (19 MiB each), and at most QUEUE_LIMIT wait:
 * a flood of logins is answered 429 instead of exhausting memory.
 */
export const ARGON2_CONCURRENCY = 4;
const QUEUE_LIMIT = 200;
let running = 0;
const waiting: (() => void)[] = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= ARGON2_CONCURRENCY) {
    if (waiting.length >= QUEUE_LIMIT) {
      throw new FlotillaError("too_many_requests", undefined, { headers: { "retry-after": "1" } });
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running += 1;
  }
  try {
    return await work();
  } finally {
    // Hand the slot straight to the next in line, or free it.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/** How many argon2 computations run now (for tests). */
export const argon2Running = () => running;

export const hashPassword = (password: string) => limited(() => hash(password, OPTIONS));

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (!passwordHash) return false;
  return limited(async () => {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  });
}
