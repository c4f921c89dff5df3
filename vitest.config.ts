import { defineConfig } from "vitest/config";

// Unit and integration tests; the browser specs in e2e/ run separately (they need the built dashboard).
export default defineConfig({
  test: {
    projects: ["packages/domain", "apps/server", "apps/web", "apps/agent", "apps/cli"],
  },
});
