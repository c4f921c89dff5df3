import { BOOTSTRAP_RETRY_MS } from "@flotilla/domain";

/**
 * Runs the app's start-up and, when it fails, reports the failure (the page gets a load-failed
 * marker) and tries again by itself after 10 s (spec 1 §8), until it succeeds.
 */
export interface Bootstrap {
  start(): Promise<void>;
  /** Try again now instead of waiting (the failure message's button). */
  retryNow(): Promise<void>;
}

export function createBootstrap(options: {
  run: () => Promise<void>;
  onFailure: (error: unknown, retryInMs: number) => void;
  onSuccess?: () => void;
  retryDelayMs?: number;
}): Bootstrap {
  const { run, onFailure, onSuccess, retryDelayMs = BOOTSTRAP_RETRY_MS } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let done = false;

  async function attempt() {
    timer = undefined;
    try {
      await run();
      done = true;
      onSuccess?.();
    } catch (error) {
      onFailure(error, retryDelayMs);
      timer = setTimeout(() => void start(), retryDelayMs);
    }
  }

  function start(): Promise<void> {
    if (done) return Promise.resolve();
    running ??= attempt().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    start,
    retryNow() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      return start();
    },
  };
}

/** The load-failed marker on the page (spec 1 §8): `<html data-load-failed="true">`. */
export function setLoadFailedMarker(failed: boolean, root: HTMLElement = document.documentElement) {
  if (failed) root.dataset.loadFailed = "true";
  else delete root.dataset.loadFailed;
}
