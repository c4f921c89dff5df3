import { describe, expect, it } from "vitest";
import { statusColors } from "./theme.ts";

describe("status colours", () => {
  it("gives each device status its own colour (spec 2 §4, DEV-009)", () => {
    const colours = Object.values(statusColors);
    expect(new Set(colours).size).toBe(colours.length);
  });
});
