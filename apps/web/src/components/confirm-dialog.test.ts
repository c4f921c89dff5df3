import { describe, expect, it } from "vitest";
import { visibleItems } from "./confirm-dialog.tsx";

describe("visibleItems", () => {
  it("lists at most 10 items and counts the rest", () => {
    const items = Array.from({ length: 13 }, (_, i) => `device-${i}`);
    expect(visibleItems(items)).toEqual({ shown: items.slice(0, 10), more: 3 });
    expect(visibleItems(["a"])).toEqual({ shown: ["a"], more: 0 });
  });
});
