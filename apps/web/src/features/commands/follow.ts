import { type RunDetail, type RunEvent, runIsOver } from "./model.ts";

/** What following a run needs from the network and the clock (fakes in the tests). */
export interface FollowDeps {
  /**
   * Reads the run's event stream until it ends, passing each event on: true when it ended with
   * the run's `summary`, false when it stopped before (a dropped connection). Throws when the
   * server refuses it.
   */
  stream(onEvent: (event: RunEvent) => void): Promise<boolean>;
  /** `GET /command/v1/runs/{id}`. */
  read(): Promise<RunDetail>;
  wait(ms: number): Promise<void>;
  signal: AbortSignal;
}

export interface FollowCallbacks {
  onEvent(event: RunEvent): void;
  /** Whether the stream is being listened to now. */
  onLive(live: boolean): void;
  /** The run cannot be read at all (the first attempt failed: not found, no access). */
  onError(error: unknown): void;
}

/** After a dropped stream the run is re-read, then listened to again this much later. */
export const RECONNECT_MS = 2000;

/**
 * Follows a run to its end: its stream, and when the stream drops, a re-read of the run (as a
 * snapshot) and, while the run is still running, the stream again after a pause. A failure of
 * the very first attempt is the page's error; later ones are a connection that will come back.
 */
export async function followRun(deps: FollowDeps, callbacks: FollowCallbacks): Promise<void> {
  let first = true;
  while (!deps.signal.aborted) {
    try {
      callbacks.onLive(true);
      if (await deps.stream(callbacks.onEvent)) break;
      callbacks.onLive(false);
      const run = await deps.read();
      callbacks.onEvent({ event: "snapshot", data: run });
      if (runIsOver(run)) break;
    } catch (error) {
      if (deps.signal.aborted) return;
      if (first) {
        callbacks.onError(error);
        return;
      }
      callbacks.onLive(false);
    }
    first = false;
    await deps.wait(RECONNECT_MS);
  }
  if (!deps.signal.aborted) callbacks.onLive(false);
}
