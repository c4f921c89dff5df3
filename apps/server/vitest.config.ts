import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "server",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Test files share a worker's module graph: each builds its own app on its own database copy,
    // and importing the server once per worker instead of once per file saves minutes of CI.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
