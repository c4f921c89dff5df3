import { createSseParser } from "@flotilla/domain";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useReducer } from "react";
import { useServices } from "../../app-services.tsx";
import { responseError } from "../../lib/errors.ts";
import type { Sdk } from "../../lib/sdk.ts";
import { accountRequest } from "../auth/api.ts";
import { followRun } from "./follow.ts";
import {
  applyRunEvent,
  type RunDetail,
  type RunEvent,
  type RunListItem,
  type RunRequest,
  type RunView,
} from "./model.ts";

/** Bulk commands' API (docs/bulk-commands.md) as the dashboard calls it. */

/** The fleet's list refreshes this often while one of its runs is running. */
const LIST_POLL_MS = 3000;

export function useFleetCommandRuns(fleetId: number | undefined) {
  const { sdk, config } = useServices();
  return useQuery({
    queryKey: ["fleet", fleetId, "command-runs"],
    enabled: fleetId !== undefined,
    refetchInterval: (query) => (query.state.data?.some((run) => run.status === "running") ? LIST_POLL_MS : false),
    queryFn: async () =>
      (
        await accountRequest<{ runs: RunListItem[] }>(sdk, config.apiUrl, {
          method: "GET",
          path: `/command/v1/runs?fleet=${fleetId}&limit=100`,
        })
      ).runs,
  });
}

export function useStartCommandRun(fleetId: number) {
  const { sdk, config } = useServices();
  const queryClient = useQueryClient();
  return useMutation({
    // The dialog shows the server's words on its fields.
    meta: { reportErrors: false },
    mutationFn: (request: RunRequest) =>
      accountRequest<{ id: number }>(sdk, config.apiUrl, { method: "POST", path: "/command/v1/runs", body: request }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["fleet", fleetId, "command-runs"] }),
  });
}

export function useCancelCommandRun(runId: number, fleetId: number | undefined) {
  const { sdk, config } = useServices();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      accountRequest<RunDetail>(sdk, config.apiUrl, { method: "POST", path: `/command/v1/runs/${runId}/cancel` }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["fleet", fleetId, "command-runs"] }),
  });
}

async function authHeaders(sdk: Sdk): Promise<Record<string, string>> {
  const token = await sdk.auth.getToken().catch(() => undefined);
  return token ? { authorization: `Bearer ${token}` } : {};
}

async function readRun(sdk: Sdk, apiUrl: string, runId: number, signal: AbortSignal): Promise<RunDetail> {
  const response = await fetch(`${apiUrl}/command/v1/runs/${runId}`, { headers: await authHeaders(sdk), signal });
  if (!response.ok) throw await responseError(response);
  return (await response.json()) as RunDetail;
}

/**
 * Reads the run's event stream until its `summary`. Answers whether the run ended; a stream that
 * stops before (a dropped connection, a reader cut off) answers false. A refused stream throws.
 */
async function followStream(
  sdk: Sdk,
  apiUrl: string,
  runId: number,
  signal: AbortSignal,
  onEvent: (event: RunEvent) => void,
): Promise<boolean> {
  // EventSource cannot send the bearer token: fetch, and read the body ourselves.
  const response = await fetch(`${apiUrl}/command/v1/runs/${runId}/stream`, {
    headers: { ...(await authHeaders(sdk)), accept: "text/event-stream" },
    signal,
  });
  if (!response.ok) throw await responseError(response);
  const reader = response.body?.getReader();
  if (!reader) return false;
  const parser = createSseParser();
  const decoder = new TextDecoder();
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
        onEvent(event as RunEvent);
        if (event.event === "summary") ended = true;
      }
    }
  } catch {
    // The connection dropped: the caller re-reads the run.
  }
  return ended;
}

type State = { run: RunView | undefined; error: unknown; live: boolean };
type Action = { type: "event"; event: RunEvent } | { type: "error"; error: unknown } | { type: "live"; live: boolean };

function reduce(state: State, action: Action): State {
  if (action.type === "error") return { ...state, error: action.error, live: false };
  if (action.type === "live") return { ...state, live: action.live };
  return { ...state, run: applyRunEvent(state.run, action.event) };
}

/**
 * A run followed live: its stream's snapshot, then output, state and summary events. A dropped
 * stream falls back to re-reading the run, and listens again while the run is still running.
 * `error` is set when the run cannot be read at all (not found, no access).
 */
export function useCommandRunLive(runId: number | undefined) {
  const { sdk, config } = useServices();
  const [state, dispatch] = useReducer(reduce, { run: undefined, error: undefined, live: false });
  useEffect(() => {
    if (runId === undefined) return;
    const abort = new AbortController();
    const { signal } = abort;
    const onEvent = (event: RunEvent) => dispatch({ type: "event", event });
    void followRun(
      {
        stream: (handle) => followStream(sdk, config.apiUrl, runId, signal, handle),
        read: () => readRun(sdk, config.apiUrl, runId, signal),
        wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        signal,
      },
      {
        onEvent,
        onLive: (live) => dispatch({ type: "live", live }),
        onError: (error) => dispatch({ type: "error", error }),
      },
    );
    return () => abort.abort();
  }, [runId, sdk, config.apiUrl]);
  const applySnapshot = (run: RunDetail) => dispatch({ type: "event", event: { event: "snapshot", data: run } });
  return { ...state, applySnapshot };
}
