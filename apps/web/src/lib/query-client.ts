import { DEFAULT_POLL_INTERVAL_MS, POLL_GRACE_FACTOR } from "@flotilla/domain";
import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { getStatusCode, isAuthError } from "./errors.ts";
import { isFailedQueryCheck } from "./query-check.ts";

/**
 * Polling options for a query (spec 1 §9; decisions §6): refetch every `intervalMs` (default
 * 15 s), never while the tab is hidden. The grace factor (0.33) says how much of an interval data
 * may age and still count as fresh when a page mounts or the tab comes back: 15 s × (1 − 0.33) ≈
 * 10 s, so a fresh answer is reused and an older one refetched at once instead of waiting for the
 * next tick.
 */
export function pollingOptions(intervalMs = DEFAULT_POLL_INTERVAL_MS, graceFactor = POLL_GRACE_FACTOR) {
  return {
    refetchInterval: intervalMs,
    refetchIntervalInBackground: false,
    staleTime: Math.round(intervalMs * (1 - graceFactor)),
  } as const;
}

/**
 * Client errors (4xx) and answers that failed a query check will not get better by asking
 * again; network and server failures might.
 */
export function shouldRetryQuery(failureCount: number, error: unknown): boolean {
  const status = getStatusCode(error);
  if (isAuthError(error) || isFailedQueryCheck(error)) return false;
  if (status !== undefined && status >= 400 && status < 500) return false;
  return failureCount < 2;
}

declare module "@tanstack/react-query" {
  interface Register {
    mutationMeta: {
      /** false: the page shows this mutation's errors itself, no toast. */
      reportErrors?: boolean;
    };
  }
}

export function createQueryClient(
  options: {
    onAuthError?: (error: unknown) => void;
    onMutationError?: (error: unknown) => void;
    /** A query's answer failed the shape check its page asked for (errors.failed_query_check). */
    onQueryCheckFailed?: (error: unknown) => void;
  } = {},
) {
  return new QueryClient({
    queryCache: new QueryCache({
      onError(error) {
        if (isAuthError(error)) options.onAuthError?.(error);
        else if (isFailedQueryCheck(error)) options.onQueryCheckFailed?.(error);
      },
    }),
    mutationCache: new MutationCache({
      onError(error, _variables, _context, mutation) {
        if (isAuthError(error)) options.onAuthError?.(error);
        else if (mutation.meta?.reportErrors !== false) options.onMutationError?.(error);
      },
    }),
    defaultOptions: {
      queries: {
        retry: shouldRetryQuery,
        // Polling stops while the tab is hidden (spec 1 §9).
        refetchIntervalInBackground: false,
        refetchOnWindowFocus: true,
        staleTime: 0,
      },
      mutations: { retry: false },
    },
  });
}
