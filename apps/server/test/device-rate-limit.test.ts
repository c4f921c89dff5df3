import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { hashApiKey } from "../src/features/api-keys/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * The device routes are limited per device key so that a site's devices behind one NAT do not
 * share a limit, but only once the key is known to be one: random bearer tokens must not each buy
 * a fresh bucket (and a key look-up). Unknown tokens are remembered briefly, so a flood of one
 * costs no database reads.
 */
const LIMIT = 5;
const UUID = "0123456789abcdef0123456789abcdef";
const randomToken = () => crypto.randomBytes(16).toString("hex");

describe("rate limit of the device routes", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ FLOTILLA_RATE_LIMIT: String(LIMIT) });
  });
  afterAll(async () => {
    await t?.close();
  });

  const state = async (token: string, path = `/device/v3/${UUID}/state`) => {
    const response = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    await response.text();
    return response.status;
  };

  it("counts unknown tokens against the address's limit, and looks each up once", async () => {
    const select = vi.spyOn(t.ctx.db.orm, "select");
    try {
      const repeated = randomToken();
      expect([await state(repeated), await state(repeated), await state(repeated)]).toEqual([401, 401, 401]);
      // One key look-up for the three requests: the unknown token is remembered.
      expect(select).toHaveBeenCalledTimes(1);
      const seen: number[] = [];
      for (let n = 0; n < LIMIT; n++)
        seen.push(await state(randomToken(), n % 2 ? "/cloudlink/v1/connect" : undefined));
      expect(seen.slice(0, LIMIT - 3)).toEqual(Array(LIMIT - 3).fill(401));
      expect(seen.slice(LIMIT - 3)).toEqual([429, 429, 429]);
    } finally {
      select.mockRestore();
    }
  });

  it("gives a verified device key its own bucket, beyond the address's limit", async () => {
    const own = await createTestApp({ FLOTILLA_RATE_LIMIT: String(LIMIT) });
    try {
      const org = await own.factories.organization();
      const device = await own.factories.device(await own.factories.fleet(org));
      const key = randomToken();
      await own.db.query(`INSERT INTO "api_key" (key_hash, is_of__actor, role) VALUES ($1, $2, 'device-api-key')`, [
        hashApiKey(key),
        device.actor,
      ]);
      const seen: number[] = [];
      for (let n = 0; n < LIMIT * 2; n++) {
        const response = await fetch(`${own.url}/device/v3/${device.uuid}/state`, {
          headers: { authorization: `Bearer ${key}` },
        });
        await response.text();
        seen.push(response.status);
      }
      expect(seen).toEqual(Array(LIMIT * 2).fill(200));
      // The address's bucket runs out (invented tokens)...
      let last = 0;
      for (let n = 0; n < LIMIT; n++) {
        const response = await fetch(`${own.url}/device/v3/${device.uuid}/state`, {
          headers: { authorization: `Bearer ${randomToken()}` },
        });
        await response.text();
        last = response.status;
      }
      expect(last).toBe(429);
      // ...and a change of API keys elsewhere drops the key caches: the device keeps its own bucket.
      own.ctx.devices.dropDeviceKeys();
      for (let n = 0; n < LIMIT * 2; n++) {
        const response = await fetch(`${own.url}/device/v3/${device.uuid}/state`, {
          headers: { authorization: `Bearer ${key}` },
        });
        await response.text();
        seen.push(response.status);
      }
      expect(seen).toEqual(Array(LIMIT * 4).fill(200));
    } finally {
      await own.close();
    }
  });
});
