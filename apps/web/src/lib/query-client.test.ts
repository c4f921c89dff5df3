import { describe, expect, it } from "vitest";
import {
  createQueryClient,
  isSessionLostError,
  pollingOptions,
  sessionLostText,
  shouldRetryQuery,
  shouldThrowQueryError,
} from "./query-client.ts";

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

describe("failed data loads", () => {
  const empty = { state: { data: undefined } };
  it("end on the error page when nothing was loaded yet", () => {
    expect(shouldThrowQueryError({ statusCode: 500 }, empty)).toBe(true);
    expect(shouldThrowQueryError(new TypeError("Failed to fetch"), empty)).toBe(true);
  });

  it("keep the data already shown, and leave alone queries whose component shows the failure", () => {
    expect(shouldThrowQueryError({ statusCode: 500 }, { state: { data: [] } })).toBe(false);
    expect(shouldThrowQueryError({ statusCode: 500 }, { ...empty, meta: { handlesErrors: true } })).toBe(false);
  });

  it("log out on a 401 instead, with the session or the token text", () => {
    expect(shouldThrowQueryError({ statusCode: 401 }, empty)).toBe(false);
    expect(isSessionLostError({ statusCode: 401 })).toBe(true);
    expect(isSessionLostError({ code: "BalenaNotLoggedIn" })).toBe(true);
    expect(isSessionLostError({ statusCode: 403 })).toBe(false);
    expect(sessionLostText({ statusCode: 401 })).toBe("errors.session_expired");
    expect(sessionLostText({ code: "BalenaExpiredToken" })).toBe("errors.token_expired");
  });

  it("report a failed variable, release or config load as a toast and keep the page (spec 2 §8)", async () => {
    expect(shouldThrowQueryError({ statusCode: 500 }, { ...empty, meta: { reportErrors: true } })).toBe(false);
    const toasts: unknown[] = [];
    const client = createQueryClient({ onQueryError: (error) => toasts.push(error) });
    const failure = { statusCode: 400, body: "bad filter" };
    await client
      .fetchQuery({
        queryKey: ["vars"],
        queryFn: () => Promise.reject(failure),
        retry: false,
        meta: { reportErrors: true },
      })
      .catch(() => undefined);
    await client
      .fetchQuery({ queryKey: ["other"], queryFn: () => Promise.reject(failure), retry: false })
      .catch(() => undefined);
    expect(toasts).toEqual([failure]);
  });

  it('say "You have to log in." when the request went without a token (spec 1 §8)', async () => {
    expect(sessionLostText({ code: "BalenaNotLoggedIn" })).toBe("errors.not_logged_in");
    const refused = { statusCode: 401, responseHeaders: new Headers({ "x-flotilla-error-code": "not_logged_in" }) };
    expect(sessionLostText(refused)).toBe("errors.not_logged_in");
    // A write refused for want of a token logs out (with that text) instead of a toast of its own.
    const calls: string[] = [];
    const client = createQueryClient({
      onAuthError: (error) => calls.push(`logout:${sessionLostText(error)}`),
      onMutationError: () => calls.push("toast"),
    });
    await client
      .getMutationCache()
      .build(client, { mutationFn: () => Promise.reject(refused) })
      .execute(undefined)
      .catch(() => undefined);
    expect(calls).toEqual(["logout:errors.not_logged_in"]);
  });

  it("show a 401 that refuses a right on the page, and only check the session", async () => {
    const refusal = { statusCode: 401, responseHeaders: new Headers({ "x-flotilla-error-code": "unauthorized" }) };
    expect(isSessionLostError(refusal)).toBe(false);
    expect(shouldThrowQueryError(refusal, empty)).toBe(true);
    const calls: string[] = [];
    const client = createQueryClient({
      onAuthError: () => calls.push("logout"),
      onAuthCheck: () => calls.push("check"),
      onMutationError: () => calls.push("toast"),
    });
    await client.fetchQuery({ queryKey: ["refused"], queryFn: () => Promise.reject(refusal) }).catch(() => undefined);
    await client
      .getMutationCache()
      .build(client, { mutationFn: () => Promise.reject(refusal) })
      .execute(undefined)
      .catch(() => undefined);
    expect(calls).toEqual(["check", "check", "toast"]);
  });
});
