import { describe, expect, it } from "vitest";
import { hostCommandsSupported } from "./runs.ts";

describe("host commands by OS", () => {
  it("refuses balenaOS before 2.7.5 only", () => {
    expect(hostCommandsSupported("balenaOS 2.7.4")).toBe(false);
    expect(hostCommandsSupported("Resin OS 2.0.0")).toBe(false);
    expect(hostCommandsSupported("balenaOS 2.7.5")).toBe(true);
    expect(hostCommandsSupported("balenaOS 6.1.0")).toBe(true);
    expect(hostCommandsSupported("Debian GNU/Linux 12 (bookworm)")).toBe(true);
    expect(hostCommandsSupported(null)).toBe(true);
  });
});
