import { afterEach, describe, expect, it, vi } from "vitest";
import { notePasswordLength } from "./password-too-long.ts";

afterEach(() => vi.unstubAllGlobals());

describe("notePasswordLength", () => {
  it("raises the banner flag for a password over 64 characters and clears it otherwise", () => {
    const store = new Map<string, string>();
    vi.stubGlobal("sessionStorage", {
      getItem: (key: string) => store.get(key) ?? null,
      setItem: (key: string, value: string) => store.set(key, value),
      removeItem: (key: string) => store.delete(key),
    });
    notePasswordLength("x".repeat(65));
    expect(store.get("flotilla.passwordTooLong")).toBe("1");
    notePasswordLength("x".repeat(64));
    expect(store.has("flotilla.passwordTooLong")).toBe(false);
  });
});
