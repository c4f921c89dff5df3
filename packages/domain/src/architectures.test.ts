import { describe, expect, it } from "vitest";
import { runsArchitecture } from "./architectures.ts";

describe("compatible CPU architectures", () => {
  it("lets 64-bit ARM devices into 32-bit ARM fleets, never the other way", () => {
    expect(runsArchitecture("aarch64", "aarch64")).toBe(true);
    expect(runsArchitecture("aarch64", "armv7hf")).toBe(true);
    expect(runsArchitecture("aarch64", "rpi")).toBe(true);
    expect(runsArchitecture("armv7hf", "rpi")).toBe(true);
    expect(runsArchitecture("armv7hf", "aarch64")).toBe(false);
    expect(runsArchitecture("rpi", "armv7hf")).toBe(false);
    expect(runsArchitecture("amd64", "i386")).toBe(false);
    expect(runsArchitecture("aarch64", "amd64")).toBe(false);
  });
});
