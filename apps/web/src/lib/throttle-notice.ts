import { useSyncExternalStore } from "react";

/**
 * The "requests are being throttled" notice (spec 2 §8): every 429 answer shows an info banner
 * for its Retry-After, and at least 5 s.
 */
export const THROTTLE_NOTICE_MIN_MS = 5000;

let until = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();
const emit = () => {
  for (const listener of listeners) listener();
};

export function noteThrottled(retryAfterMs: number | undefined, now = Date.now()) {
  const end = now + Math.max(retryAfterMs ?? 0, THROTTLE_NOTICE_MIN_MS);
  if (end <= until) return;
  until = end;
  clearTimeout(timer);
  timer = setTimeout(emit, end - now);
  emit();
}

export const isThrottled = (now = Date.now()) => now < until;

export function useThrottled(): boolean {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => isThrottled(),
    () => false,
  );
}
