import { describe, expect, it } from "vitest";
import { tagKeyProblem } from "./hooks.ts";

describe("tag keys", () => {
  it("follows balena's rules and words", () => {
    expect(tagKeyProblem("location")).toBeUndefined();
    expect(tagKeyProblem("io.balenaish")).toBeUndefined();
    expect(tagKeyProblem("my key")).toBe("Tag keys cannot contain whitespace.");
    expect(tagKeyProblem("tab\there")).toBe("Tag keys cannot contain whitespace.");
    expect(tagKeyProblem("io.resin.x")).toBe("Tag keys beginning with io.resin. are reserved.");
    expect(tagKeyProblem("io.balena.update")).toBe("Tag keys beginning with io.balena. are reserved.");
    expect(tagKeyProblem("")).toBe("Tag keys must be 1 to 100 characters long.");
    expect(tagKeyProblem("k".repeat(101))).toBe("Tag keys must be 1 to 100 characters long.");
    expect(tagKeyProblem("k".repeat(164), 164)).toBeUndefined();
  });
});
