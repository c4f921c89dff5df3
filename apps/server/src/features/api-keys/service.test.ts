import { describe, expect, it } from "vitest";
import { generateApiKey } from "./service.ts";

describe("generated API keys", () => {
  it("are 32 letters and digits, distinct, never starting with a dash a command line would take for an option", () => {
    const keys = Array.from({ length: 2000 }, generateApiKey);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
