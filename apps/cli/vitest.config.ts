import { defineProject } from "vitest/config";

// Unit tests (src/**/*.test.ts) and integration tests that run the real CLI against the real API
// (test/*.test.ts, the API booted in-process through the server's test harness, which needs its
// migrated-database snapshot).
export default defineProject({
  test: {
    name: "cli",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
