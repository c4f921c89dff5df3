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

describe("fleetNameProblem and the free plan (spec 2 §5, spec-decisions 13)", () => {
  it("names the first problem, the case-insensitive clash last", async () => {
    const { fleetNameProblem } = await import("./names.ts");
    expect(fleetNameProblem(undefined)).toBe("A name is required");
    expect(fleetNameProblem("_abc")).toBe("The name can only contain alphanumeric characters, hyphens or underscores");
    expect(fleetNameProblem("Sensors", "block", ["sensors"])).toBe(
      "This name is already used by another block. Note that the name is case-insensitive",
    );
    expect(fleetNameProblem("sensors-2", "fleet", ["sensors"])).toBeUndefined();
  });

  it("blocks adding devices at and above the allowance of 10", async () => {
    const { freePlanDeviceBlock } = await import("./names.ts");
    expect(freePlanDeviceBlock(9)).toBeUndefined();
    expect(freePlanDeviceBlock(10)).toBe("free plan allowance reached");
    expect(freePlanDeviceBlock(11)).toBe("provisioned more devices than free allowance");
  });
});
