import { describe, expect, it } from "vitest";
import { isNumericId, requireNumericId, upOneLevel } from "./route-id.ts";
import { getToasts } from "./toasts.ts";

describe("numeric ids in URLs", () => {
  it("accepts digits only", () => {
    expect(isNumericId("42")).toBe(true);
    expect(isNumericId("042")).toBe(false);
    expect(isNumericId("4a")).toBe(false);
    expect(isNumericId("-1")).toBe(false);
    expect(isNumericId("99999999999999999999")).toBe(false);
  });

  it("goes up one level with the spec's message for a non-numeric id", () => {
    expect(upOneLevel("/orgs/abc/members")).toBe("/orgs/abc");
    expect(upOneLevel("/orgs/abc/")).toBe("/orgs");
    expect(requireNumericId("7", "/orgs/7")).toBe(7);
    let thrown: unknown;
    try {
      requireNumericId("abc", "/orgs/abc");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ options: { href: "/orgs", replace: true } });
    expect(getToasts().at(-1)?.message).toBe(
      "Invalid id passed in URL: this page needs a number there, so you were taken up one level.",
    );
  });
});
