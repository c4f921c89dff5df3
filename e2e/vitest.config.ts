import { defineProject } from "vitest/config";

// Browser specs: one file at a time (each boots a server and a Chromium on a 2-core machine).
export default defineProject({
  test: {
    name: "e2e",
    include: ["specs/**/*.e2e.ts"],
    setupFiles: ["support/setup.ts"],
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 90_000,
  },
});
