import crypto from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSealer } from "./sealed.ts";

describe("sealed secrets", () => {
  const secret = crypto.randomBytes(48);
  it("opens what it sealed, and nothing sealed under another key or purpose", () => {
    const sealer = createSealer(secret, "webhook-secret");
    const stored = sealer.seal("whsec_abc");
    expect(stored).toMatch(/^sealed:v1:/);
    expect(stored).not.toContain("whsec_abc");
    expect(sealer.open(stored)).toBe("whsec_abc");
    expect(sealer.seal("whsec_abc")).not.toBe(stored);
    expect(() => createSealer(secret, "other").open(stored)).toThrow();
    expect(() => createSealer(crypto.randomBytes(48), "webhook-secret").open(stored)).toThrow();
  });
  it("reads a value stored before sealing as it is", () => {
    expect(createSealer(secret, "webhook-secret").open("whsec_plain")).toBe("whsec_plain");
  });
});
