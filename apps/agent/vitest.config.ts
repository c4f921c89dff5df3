import { defineProject } from "vitest/config";

// Unit tests (src/**/*.test.ts) and integration tests against the real API (test/*.test.ts, booted
// in-process through the server's test harness, which needs its migrated-database snapshot).
export default defineProject({
  test: {
    name: "agent",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
