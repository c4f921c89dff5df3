import { describe, expect, it } from "vitest";
import { supervisorMajor, userActionsNeedUpdate } from "./user-actions.ts";

describe("user actions", () => {
  it("reads the supervisor major from the reported version", () => {
    expect(supervisorMajor("16.7.0")).toBe(16);
    expect(supervisorMajor("v6.6.11")).toBe(6);
    expect(supervisorMajor("")).toBeUndefined();
    expect(supervisorMajor(null)).toBeUndefined();
    expect(supervisorMajor("latest")).toBeUndefined();
  });

  it("needs an update only for a known supervisor older than 7", () => {
    expect(userActionsNeedUpdate("6.6.11")).toBe(true);
    expect(userActionsNeedUpdate("1.0.0")).toBe(true);
    expect(userActionsNeedUpdate("7.0.0")).toBe(false);
    expect(userActionsNeedUpdate("16.7.0")).toBe(false);
    expect(userActionsNeedUpdate(null)).toBe(false);
    expect(userActionsNeedUpdate(undefined)).toBe(false);
  });
});
