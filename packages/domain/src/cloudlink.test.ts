import { describe, expect, it } from "vitest";
import { parseCloudlinkAttempt } from "./cloudlink.ts";

describe("parseCloudlinkAttempt", () => {
  it.each([
    ["a1b2c3.1", { run: "a1b2c3", n: 1 }],
    ["ff.42", { run: "ff", n: 42 }],
    [undefined, undefined],
    [["a1.1"], undefined],
    ["", undefined],
    ["a1b2", undefined],
    ["a1b2.", undefined],
    ["xyz.1", undefined],
    ["a1.-1", undefined],
    ["a1.1.2", undefined],
    [`${"a".repeat(33)}.1`, undefined],
    ["a1.1234567890123456", undefined],
  ])("%j → %j", (value, expected) => {
    expect(parseCloudlinkAttempt(value)).toEqual(expected);
  });
});
