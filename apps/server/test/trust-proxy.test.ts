import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * The client address behind the rate limits, login throttles and audit records comes from the
 * socket unless the operator names the proxies in front (FLOTILLA_TRUST_PROXY): a client must not
 * choose its own address with X-Forwarded-For.
 */
const LIMIT = 3;

/** Statuses of unauthenticated reads of devices (401: devices are never public), which the global limit counts. */
async function statuses(t: TestApp, forwardedFor: (n: number) => string) {
  const seen: number[] = [];
  for (let n = 0; n < LIMIT + 2; n++) {
    const response = await fetch(`${t.url}/v7/device`, { headers: { "x-forwarded-for": forwardedFor(n) } });
    await response.text();
    seen.push(response.status);
  }
  return seen;
}

describe("forwarded headers", () => {
  let direct: TestApp;
  let proxied: TestApp;
  let hops: TestApp;
  beforeAll(async () => {
    hops = await createTestApp({ FLOTILLA_RATE_LIMIT: String(LIMIT), FLOTILLA_TRUST_PROXY: "1" });
    direct = await createTestApp({ FLOTILLA_RATE_LIMIT: String(LIMIT) });
    proxied = await createTestApp({ FLOTILLA_RATE_LIMIT: String(LIMIT), FLOTILLA_TRUST_PROXY: "127.0.0.1" });
  });
  afterAll(async () => {
    await direct?.close();
    await proxied?.close();
    await hops?.close();
  });

  it("are ignored by default: a new X-Forwarded-For per request still hits the address's limit", async () => {
    const seen = await statuses(direct, (n) => `203.0.113.${n + 1}`);
    expect(seen.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
    expect(seen.slice(LIMIT)).toEqual([429, 429]);
  });

  it("name the client when the request comes from a proxy FLOTILLA_TRUST_PROXY names", async () => {
    const seen = await statuses(proxied, (n) => `203.0.113.${n + 1}`);
    expect(seen).toEqual(Array(LIMIT + 2).fill(401));
    // One client behind the proxy is still limited.
    const same = await statuses(proxied, () => "198.51.100.7");
    expect(same.slice(LIMIT)).toEqual([429, 429]);
  });

  it("name the client behind the nearest hop with FLOTILLA_TRUST_PROXY=1", async () => {
    expect(await statuses(hops, (n) => `192.0.2.9, 203.0.113.${n + 1}`)).toEqual(Array(LIMIT + 2).fill(401));
  });
});
