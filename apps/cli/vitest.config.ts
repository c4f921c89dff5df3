import { defineProject } from "vitest/config";

// Unit tests (src/**/*.test.ts) and integration tests that run the real CLI against the real API
// (test/*.test.ts, the API booted in-process through the server's test harness, which needs its
// migrated-database snapshot).
export default defineProject({
  test: {
    name: "cli",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Test files share a worker's module graph: each builds its own app on its own database copy,
    // and importing the server once per worker instead of once per file saves minutes of CI.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
