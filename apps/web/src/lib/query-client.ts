import { DEFAULT_POLL_INTERVAL_MS, POLL_GRACE_FACTOR } from "@flotilla/domain";
import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { apiErrorCode, getErrorCode, getStatusCode, isAuthError, isNotLoggedIn } from "./errors.ts";
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
  if (isSessionLostError(error) || isFailedQueryCheck(error)) return false;
  if (status !== undefined && status >= 400 && status < 500) return false;
  return failureCount < 2;
}

declare module "@tanstack/react-query" {
  interface Register {
    mutationMeta: {
      /** false: the page shows this mutation's errors itself, no toast. */
      reportErrors?: boolean;
    };
    queryMeta: {
      /**
       * true: the component that reads this query shows its failure itself (an alert, a fallback),
       * so a failed first load does not replace the page with the error page.
       */
      handlesErrors?: boolean;
      /**
       * true: a failed load is a danger toast with the error's text (spec 2 §8 Behaviour: variable,
       * release and config loads), and the page stays, showing what it has, instead of the error page.
       */
      reportErrors?: boolean;
    };
  }
}

/**
 * A data load answered 401 (the token was revoked, its session ended) or with one of the SDK's
 * not-logged-in errors: the session is gone and the app logs out (spec 1 §8).
 */
export function isSessionLostError(error: unknown): boolean {
  if (isPermissionRefusal(error)) return false;
  return isAuthError(error) || getStatusCode(error) === 401 || getErrorCode(error) === "BalenaUnauthorized";
}

/**
 * A 401 that refuses a right to a signed-in caller ("Unauthorized: user lacks the permission to
 * …", code `unauthorized`), not the session: the page shows it, and the session handler only
 * checks whether the user is still logged in (spec 1 §8 "other auth-like errors").
 */
export const isPermissionRefusal = (error: unknown) =>
  getStatusCode(error) === 401 && apiErrorCode(error) === "unauthorized";

/**
 * Which text the logout after a lost session shows (spec 1 §8): "Your authentication token has
 * expired." when the token itself ran out, "You have to log in." when the request went without
 * one (signed out in another tab), "Your session has expired." otherwise.
 */
export function sessionLostText(error: unknown): SessionLostText {
  if (isNotLoggedIn(error)) return "errors.not_logged_in";
  return getErrorCode(error) === "BalenaExpiredToken" ? "errors.token_expired" : "errors.session_expired";
}

export type SessionLostText = "errors.token_expired" | "errors.session_expired" | "errors.not_logged_in";

/**
 * A query whose first load failed ends on the route's error page ("something went wrong", the
 * status text, Refresh) instead of leaving the page blank. Not when data is already shown (a failed
 * poll keeps the last answer), not for a lost session (the app logs out), and not for queries
 * whose component shows the failure itself (meta.handlesErrors).
 */
export function shouldThrowQueryError(
  error: unknown,
  query: { state: { data: unknown }; meta?: { handlesErrors?: boolean; reportErrors?: boolean } | undefined },
): boolean {
  if (query.meta?.handlesErrors || query.meta?.reportErrors) return false;
  if (query.state.data !== undefined) return false;
  return !isSessionLostError(error);
}

export function createQueryClient(
  options: {
    onAuthError?: (error: unknown) => void;
    /** A permission refusal: log out only if the session turns out to be gone (spec 1 §8). */
    onAuthCheck?: () => void;
    onMutationError?: (error: unknown) => void;
    /** A query's answer failed the shape check its page asked for (errors.failed_query_check). */
    onQueryCheckFailed?: (error: unknown) => void;
    /** A failed load of a query whose meta asks for it (reportErrors): a danger toast. */
    onQueryError?: (error: unknown) => void;
  } = {},
) {
  return new QueryClient({
    queryCache: new QueryCache({
      onError(error, query) {
        // Any data load answered 401 means the session is gone (a revoked token, an ended session).
        if (isSessionLostError(error)) options.onAuthError?.(error);
        else if (isPermissionRefusal(error)) options.onAuthCheck?.();
        else if (isFailedQueryCheck(error)) options.onQueryCheckFailed?.(error);
        else if (query.meta?.reportErrors) options.onQueryError?.(error);
      },
    }),
    mutationCache: new MutationCache({
      onError(error, _variables, _context, mutation) {
        if (isAuthError(error)) options.onAuthError?.(error);
        else {
          // spec 2 §7: an unauthorized answer to any action hands over to the session handler.
          if (isPermissionRefusal(error)) options.onAuthCheck?.();
          if (mutation.meta?.reportErrors !== false) options.onMutationError?.(error);
        }
      },
    }),
    defaultOptions: {
      queries: {
        retry: shouldRetryQuery,
        throwOnError: shouldThrowQueryError,
        // Polling stops while the tab is hidden (spec 1 §9).
        refetchIntervalInBackground: false,
        refetchOnWindowFocus: true,
        staleTime: 0,
      },
      mutations: { retry: false },
    },
  });
}
