import { describe, expect, it } from "vitest";
import { ARGON2_CONCURRENCY, argon2Running, hashPassword, verifyPassword } from "./passwords.ts";

describe("argon2 work cap", () => {
  it(`runs at most ${ARGON2_CONCURRENCY} hashes at once and answers the rest in turn`, async () => {
    let most = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        most = Math.max(most, argon2Running());
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const hashes = await Promise.all(Array.from({ length: 12 }, (_, i) => hashPassword(`password-${i}`)));
    watching = false;
    await watch;
    expect(most).toBe(ARGON2_CONCURRENCY);
    expect(argon2Running()).toBe(0);
    expect(await verifyPassword(hashes[3] ?? "", "password-3")).toBe(true);
    expect(await verifyPassword(hashes[3] ?? "", "password-4")).toBe(false);
    expect(await verifyPassword(null, "password-4")).toBe(false);
    expect(await verifyPassword("not-a-hash", "password-4")).toBe(false);
  });

  it("refuses with 429 once 200 computations are waiting, instead of queueing without bound", async () => {
    const hash = await hashPassword("the-password");
    const results = await Promise.allSettled(
      Array.from({ length: ARGON2_CONCURRENCY + 210 }, () => verifyPassword(hash, "the-password")),
    );
    const refused = results.filter((r) => r.status === "rejected");
    expect(refused.length).toBe(10);
    expect(refused[0]).toMatchObject({ reason: { statusCode: 429, headers: { "retry-after": "1" } } });
    expect(results.filter((r) => r.status === "fulfilled" && r.value === true)).toHaveLength(ARGON2_CONCURRENCY + 200);
    expect(argon2Running()).toBe(0);
  });
});
