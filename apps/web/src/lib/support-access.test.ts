import { describe, expect, it } from "vitest";
import {
  defaultSupportAccessInput,
  repositoryUrlValue,
  supportAccessState,
  supportAccessUntil,
  toDateTimeLocal,
} from "./support-access.ts";

const now = new Date(2026, 0, 10, 12, 0).getTime();

describe("support access", () => {
  it("is off without a date, granted before it and expired after it", () => {
    expect(supportAccessState(null, now)).toEqual({ state: "off" });
    expect(supportAccessState(new Date(now + 1000).toISOString(), now).state).toBe("granted");
    expect(supportAccessState(new Date(now - 1000).toISOString(), now).state).toBe("expired");
  });

  it("suggests 5 days ahead", () => {
    expect(defaultSupportAccessInput(now)).toBe(toDateTimeLocal(new Date(2026, 0, 15, 12, 0)));
  });

  it("refuses a date earlier than now and sends ms otherwise", () => {
    expect(supportAccessUntil("", now)).toEqual({ ok: false, error: "missing" });
    expect(supportAccessUntil(toDateTimeLocal(new Date(2026, 0, 9)), now)).toEqual({ ok: false, error: "past" });
    expect(supportAccessUntil(toDateTimeLocal(new Date(2026, 0, 11, 9, 30)), now)).toEqual({
      ok: true,
      ms: new Date(2026, 0, 11, 9, 30).getTime(),
    });
  });

  it("stores an empty repository URL as null", () => {
    expect(repositoryUrlValue("  ")).toBeNull();
    expect(repositoryUrlValue(" https://github.com/a/b ")).toBe("https://github.com/a/b");
  });
});
