import { describe, expect, it } from "vitest";
import { fleetName, handleFromName, nameTakenText } from "./names.ts";

const problem = (value: unknown) => {
  const result = fleetName.safeParse(value);
  return result.success ? undefined : result.error.issues[0]?.message;
};

describe("fleet names (spec 2 §5)", () => {
  it("accepts letters, digits, hyphens and underscores starting with a letter or digit", () => {
    expect(problem("my-fleet_01")).toBeUndefined();
    expect(problem("1fleet")).toBeUndefined();
  });

  it.each([
    [undefined, "A name is required"],
    ["", "A name is required"],
    ["abc", "The name should be at least 4 characters long"],
    ["a".repeat(101), "The name should not be more than 100 characters long"],
    ["-fleet", "The name can only contain alphanumeric characters, hyphens or underscores"],
    ["my fleet", "The name can only contain alphanumeric characters, hyphens or underscores"],
  ])("refuses %j with %s", (value, message) => {
    expect(problem(value)).toBe(message);
  });

  it("says the name is taken in the spec's words", () => {
    expect(nameTakenText("block")).toBe(
      "This name is already used by another block. Note that the name is case-insensitive",
    );
  });
});

describe("organization handles", () => {
  it("are lowercase names with unsafe characters folded", () => {
    expect(handleFromName("  Acme Robotics! ")).toBe("acme_robotics");
    expect(handleFromName("***")).toBe("organization");
  });
});
