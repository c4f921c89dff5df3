import { describe, expect, it } from "vitest";
import { cliCallbackOf } from "./cli-login-page.tsx";

describe("cliCallbackOf", () => {
  it("reads the callback from the encoded path or the query", () => {
    expect(cliCallbackOf(encodeURIComponent("http://127.0.0.1:8989/auth"), {})).toBe("http://127.0.0.1:8989/auth");
    expect(cliCallbackOf(undefined, { callback: "http://localhost:1/x" })).toBe("http://localhost:1/x");
    expect(cliCallbackOf("", {})).toBeUndefined();
    expect(cliCallbackOf("%E0%A4%A", {})).toBe("%E0%A4%A");
  });
});
