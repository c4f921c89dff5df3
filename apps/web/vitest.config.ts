import { defineConfig } from "vitest/config";
import { jsonSections } from "./vite.config.ts";

export default defineConfig({
  plugins: [jsonSections()],
  test: {
    name: "web",
    root: import.meta.dirname,
    environment: "node",
    include: ["src/**/*.test.ts"],
    setupFiles: ["src/test-setup.ts"],
  },
});
