/**
 * Activity counters (spec 1 §4: "A session refresh pauses while activity counters are
 * non-zero"): writes on their way to the server count, so the token they were sent with is not
 * swapped under them; the hourly refresh waits for the next check with nothing in progress.
 */
let active = 0;

/** Counts one activity until the returned function is called (once). */
export function beginActivity(): () => void {
  active += 1;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    active -= 1;
  };
}

export const activityCount = () => active;
