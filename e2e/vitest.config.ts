import { defineProject } from "vitest/config";

// Browser specs: two files at a time, each with its own server, data dir and Chromium; most of a
// spec's time is spent waiting on timers (polls, simulated devices), so two fit on two cores.
export default defineProject({
  test: {
    name: "e2e",
    include: ["specs/**/*.e2e.ts"],
    globalSetup: ["support/global-setup.ts"],
    setupFiles: ["support/setup.ts"],
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 90_000,
    hookTimeout: 90_000,
    // What a page shows after a poll, a debounce or a server round trip: 1 s (vitest's default)
    // is too short for a machine busy with two specs, and waiting longer costs nothing when fast.
    expect: { poll: { timeout: 10_000, interval: 100 } },
  },
});
