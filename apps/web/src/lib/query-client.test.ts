import { describe, expect, it } from "vitest";
import { createQueryClient, pollingOptions, shouldRetryQuery } from "./query-client.ts";

describe("pollingOptions", () => {
  it("polls every 15 s by default with a grace factor of 0.33, never in hidden tabs", () => {
    expect(pollingOptions()).toEqual({
      refetchInterval: 15_000,
      refetchIntervalInBackground: false,
      staleTime: 10_050,
    });
  });

  it("scales with the interval", () => {
    expect(pollingOptions(6000)).toEqual({
      refetchInterval: 6000,
      refetchIntervalInBackground: false,
      staleTime: 4020,
    });
  });
});

describe("query client defaults", () => {
  it("does not poll in the background", () => {
    expect(createQueryClient().getDefaultOptions().queries?.refetchIntervalInBackground).toBe(false);
  });

  it("retries network and server failures twice, never client errors", () => {
    expect(shouldRetryQuery(0, new TypeError("Failed to fetch"))).toBe(true);
    expect(shouldRetryQuery(1, { statusCode: 503 })).toBe(true);
    expect(shouldRetryQuery(2, { statusCode: 503 })).toBe(false);
    expect(shouldRetryQuery(0, { statusCode: 404 })).toBe(false);
    expect(shouldRetryQuery(0, { code: "BalenaNotLoggedIn" })).toBe(false);
  });
});
