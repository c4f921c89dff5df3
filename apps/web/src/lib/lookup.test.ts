import { describe, expect, it, vi } from "vitest";
import { isMissing, leaveAction, leaveMissingResource, lookupState, routerLeaveTarget } from "./lookup.ts";
import { dismissToast, getToasts } from "./toasts.ts";

function target(canGoBack: boolean) {
  return { canGoBack: () => canGoBack, back: vi.fn(), home: vi.fn() };
}

describe("lookups that return nothing", () => {
  it("counts undefined and null as nothing, and nothing else", () => {
    expect(isMissing(undefined)).toBe(true);
    expect(isMissing(null)).toBe(true);
    for (const found of [0, "", false, [], {}]) expect(isMissing(found)).toBe(false);
  });

  it("tells pending, found, missing and failed lookups apart", () => {
    expect(lookupState({ status: "pending", data: undefined })).toBe("pending");
    expect(lookupState({ status: "success", data: { id: 1 } })).toBe("found");
    expect(lookupState({ status: "success", data: undefined })).toBe("missing");
    expect(lookupState({ status: "success", data: null })).toBe("missing");
    // A failed request is the error handling's business, not "not found".
    expect(lookupState({ status: "error", data: undefined })).toBe("failed");
  });

  it("goes back when there is dashboard history, home otherwise", () => {
    expect(leaveAction(true)).toBe("back");
    expect(leaveAction(false)).toBe("home");
  });

  it("shows the Resource not found toast and navigates back", () => {
    for (const toast of getToasts()) dismissToast(toast.id);
    const withHistory = target(true);
    expect(leaveMissingResource(withHistory)).toBe("back");
    expect(withHistory.back).toHaveBeenCalledTimes(1);
    expect(withHistory.home).not.toHaveBeenCalled();
    expect(getToasts().map(({ severity, message }) => ({ severity, message }))).toEqual([
      { severity: "error", message: "Resource not found" },
    ]);
  });

  it("goes to / when the page was opened directly", () => {
    const notify = vi.fn();
    const opened = target(false);
    expect(leaveMissingResource(opened, notify)).toBe("home");
    expect(notify).toHaveBeenCalledTimes(1);
    expect(opened.home).toHaveBeenCalledTimes(1);
    expect(opened.back).not.toHaveBeenCalled();
  });

  it("uses the router's history, and replaces the dead address when going home", () => {
    const router = {
      history: { canGoBack: vi.fn(() => false), back: vi.fn() },
      navigate: vi.fn(),
    };
    const leave = routerLeaveTarget(router);
    expect(leave.canGoBack()).toBe(false);
    leave.home();
    expect(router.navigate).toHaveBeenCalledWith({ to: "/", replace: true });
    leave.back();
    expect(router.history.back).toHaveBeenCalledTimes(1);
  });
});
