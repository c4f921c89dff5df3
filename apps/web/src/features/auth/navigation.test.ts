import { describe, expect, it } from "vitest";
import {
  invitationFromRedirect,
  lastPathOf,
  looksLikeEmail,
  rememberLastPath,
  resetCodeFrom,
  setReturnUrl,
  takeReturnUrl,
} from "./navigation.ts";
import { memoryStorage } from "./test-support.ts";

describe("resetCodeFrom", () => {
  it("uses the path value, or the hash when the value is 'code'", () => {
    expect(resetCodeFrom("abc123", "")).toBe("abc123");
    expect(resetCodeFrom("code", "#xyz")).toBe("xyz");
    expect(resetCodeFrom("code", "#code=xyz")).toBe("xyz");
    expect(resetCodeFrom("code", "")).toBeUndefined();
    expect(resetCodeFrom("code", "#other=1")).toBeUndefined();
  });
});

describe("last path and return URL", () => {
  it("restores the last path per user, never /fleets", () => {
    const storage = memoryStorage();
    rememberLastPath(1, "/orgs?x=1", storage);
    rememberLastPath(2, "/fleets", storage);
    expect(lastPathOf(1, storage)).toBe("/orgs?x=1");
    expect(lastPathOf(2, storage)).toBeUndefined();
    expect(lastPathOf(3, storage)).toBeUndefined();
    for (const path of ["/login/cli/x", "/signup/profile", "/user/verify-email/pending"]) {
      rememberLastPath(4, path, storage);
      expect(lastPathOf(4, storage)).toBeUndefined();
    }
  });

  it("removes the return URL once read, optionally per key", () => {
    const storage = memoryStorage();
    setReturnUrl("/a", undefined, storage);
    setReturnUrl("/b", "cli", storage);
    expect(takeReturnUrl(undefined, storage)).toBe("/a");
    expect(takeReturnUrl(undefined, storage)).toBeUndefined();
    expect(takeReturnUrl("cli", storage)).toBe("/b");
    expect(storage.length).toBe(0);
  });
});

describe("sign-up pre-fills", () => {
  it("pre-fills the email only when it looks like one", () => {
    expect(looksLikeEmail("ann@example.com")).toBe(true);
    expect(looksLikeEmail("ann")).toBe(false);
    expect(looksLikeEmail("ann@example")).toBe(false);
    expect(looksLikeEmail(undefined)).toBe(false);
  });

  it("reads an invitation from a redirect path or URL", () => {
    expect(invitationFromRedirect("/organization/invitation/tok1")).toEqual({ type: "organization", token: "tok1" });
    expect(invitationFromRedirect("https://dash.example/invitation/tok2")).toEqual({
      type: "application",
      token: "tok2",
    });
    expect(invitationFromRedirect("/fleets")).toBeUndefined();
    expect(invitationFromRedirect(undefined)).toBeUndefined();
  });
});
