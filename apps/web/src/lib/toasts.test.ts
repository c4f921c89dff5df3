import { beforeEach, describe, expect, it } from "vitest";
import { dismissToast, getToasts, reportError, reportResourceNotFound, showToast } from "./toasts.ts";

const requestError = (statusCode: number, body: string) =>
  Object.assign(new Error(body), { code: "BalenaRequestError", statusCode, body });

describe("toasts", () => {
  beforeEach(() => {
    for (const toast of getToasts()) dismissToast(toast.id);
  });

  it("shows errors as danger toasts with their catalogue text", () => {
    expect(reportError(requestError(400, "Name is too long"))).toBe(true);
    expect(getToasts().map(({ severity, message }) => ({ severity, message }))).toEqual([
      { severity: "error", message: "Request error: Name is too long." },
    ]);
  });

  it("does not report not-found, bad credentials, not logged in or network failures", () => {
    expect(reportError(requestError(404, "Resource not found"))).toBe(false);
    expect(reportError(Object.assign(new Error("x"), { code: "BalenaInvalidLoginCredentials" }))).toBe(false);
    expect(reportError(Object.assign(new Error("x"), { code: "BalenaNotLoggedIn" }))).toBe(false);
    expect(reportError(new TypeError("Failed to fetch"))).toBe(false);
    expect(getToasts()).toEqual([]);
  });

  it("says Resource not found for empty lookups", () => {
    reportResourceNotFound();
    expect(getToasts()[0]?.message).toBe("Resource not found");
  });

  it("keeps at most three on screen", () => {
    for (const message of ["1", "2", "3", "4"]) showToast("info", message);
    expect(getToasts().map((toast) => toast.message)).toEqual(["2", "3", "4"]);
  });
});
