import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { errorText, statusText } from "./errors.ts";
import {
  checkedQueryFn,
  checkQueryResult,
  FailedQueryCheckError,
  hasFields,
  isArrayOf,
  isFailedQueryCheck,
  orMissing,
} from "./query-check.ts";
import { createQueryClient, shouldRetryQuery } from "./query-client.ts";
import { dismissToast, getToasts, reportError } from "./toasts.ts";

const isFleet = hasFields({ id: "number", app_name: "string", is_archived: "boolean", note: "nullable-string" });

describe("query checks", () => {
  beforeEach(() => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    for (const toast of getToasts()) dismissToast(toast.id);
  });
  afterEach(() => vi.restoreAllMocks());

  it("passes an answer of the expected shape through", () => {
    const fleet = { id: 1, app_name: "kiosk", is_archived: false, note: null, extra: [1] };
    expect(checkQueryResult(fleet, isFleet, "fleet")).toBe(fleet);
    expect(checkQueryResult([fleet], isArrayOf(isFleet))).toEqual([fleet]);
    expect(checkQueryResult(undefined, orMissing(isFleet))).toBeUndefined();
  });

  it("fails an answer of another shape with errors.failed_query_check", () => {
    for (const bad of [null, [], "x", { id: "1", app_name: "kiosk", is_archived: false, note: null }]) {
      expect(() => checkQueryResult(bad, isFleet, "fleet")).toThrow(FailedQueryCheckError);
    }
    expect(() => checkQueryResult([{ id: 1 }], isArrayOf(isFleet))).toThrow("Failed query check");
    const error = (() => {
      try {
        checkQueryResult({}, isFleet, "fleet");
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(isFailedQueryCheck(error)).toBe(true);
    expect(errorText(error)).toBe("Failed query check");
    expect(statusText(error)).toBe("Failed query check");
    expect((error as FailedQueryCheckError).what).toBe("fleet");
  });

  it("is reported to the user as a danger toast", () => {
    expect(reportError(new FailedQueryCheckError("fleet"))).toBe(true);
    expect(getToasts().map(({ severity, message }) => ({ severity, message }))).toEqual([
      { severity: "error", message: "Failed query check" },
    ]);
  });

  it("makes the query fail at once, without retries, and tells the app once", async () => {
    const onQueryCheckFailed = vi.fn();
    const client = createQueryClient({ onQueryCheckFailed });
    const queryFn = vi.fn(async () => ({ id: "not a number" }));
    await expect(
      client.fetchQuery({ queryKey: ["fleet", 1], queryFn: checkedQueryFn(queryFn, isFleet, "fleet") }),
    ).rejects.toBeInstanceOf(FailedQueryCheckError);
    expect(queryFn).toHaveBeenCalledTimes(1);
    expect(onQueryCheckFailed).toHaveBeenCalledTimes(1);
    expect(shouldRetryQuery(0, new FailedQueryCheckError("x"))).toBe(false);
  });

  it("does not tell the app about other query failures", async () => {
    const onQueryCheckFailed = vi.fn();
    const client = createQueryClient({ onQueryCheckFailed });
    await expect(
      client.fetchQuery({
        queryKey: ["x"],
        retry: false,
        queryFn: async () => {
          throw Object.assign(new Error("nope"), { statusCode: 400 });
        },
      }),
    ).rejects.toThrow("nope");
    expect(onQueryCheckFailed).not.toHaveBeenCalled();
  });
});
