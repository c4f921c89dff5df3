import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import react from "@vitejs/plugin-react";
import { type Connect, defineConfig, type Plugin } from "vite";
import { compression } from "vite-plugin-compression2";

/**
 * Gives every build a unique id: compiled into the bundle (`__FLOTILLA_BUILD_ID__`) and written
 * to `dist/build-info.json`, which the running dashboard re-fetches to notice a newer build.
 * Without the real server (`vite`, `vite preview`) it also answers `/config.json`.
 */
function buildInfo(): Plugin {
  const buildId = `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
  const json = (body: unknown) => `${JSON.stringify(body)}\n`;
  return {
    name: "flotilla-build-info",
    // The dev server rebuilds in place: its id is "dev", which the dashboard does not poll for.
    config: (_config, { command }) => ({
      define: { __FLOTILLA_BUILD_ID__: JSON.stringify(command === "build" ? buildId : "dev") },
    }),
    generateBundle() {
      this.emitFile({ type: "asset", fileName: "build-info.json", source: json({ buildId }) });
    },
    configureServer(server) {
      serveDevFiles(server.middlewares, server.config.server.port, json({ buildId: "dev" }));
    },
    configurePreviewServer(server) {
      // dist/build-info.json is served from the build itself.
      serveDevFiles(server.middlewares, server.config.preview.port);
    },
  };
}

/**
 * What the real server serves next to the SPA, for `vite` and `vite preview` without it:
 * `/config.json` pointing at the API in FLOTILLA_API_URL (default http://localhost:8081).
 */
function serveDevFiles(middlewares: Connect.Server, port: number | undefined, buildInfoJson?: string) {
  const files: Record<string, string> = {
    "/config.json": `${JSON.stringify({
      apiUrl: process.env.FLOTILLA_API_URL ?? "http://localhost:8081",
      publicUrl: `http://localhost:${port ?? 5173}`,
      appVersion: "31.1.1",
      deviceUrlsBaseDomain: null,
      deviceActionsHost: null,
      statusPageUrl: process.env.FLOTILLA_STATUS_PAGE_URL ?? null,
      mapTilesUrl:
        process.env.FLOTILLA_MAP_TILES === "none"
          ? null
          : (process.env.FLOTILLA_MAP_TILES ?? "https://tile.openstreetmap.org/{z}/{x}/{y}.png"),
    })}\n`,
  };
  if (buildInfoJson) files["/build-info.json"] = buildInfoJson;
  middlewares.use((request, response, next) => {
    const body = files[request.url?.split("?")[0] ?? ""];
    if (body === undefined) return next();
    response.setHeader("content-type", "application/json");
    response.setHeader("cache-control", "no-store");
    response.end(body);
  });
}

/**
 * `…/file.json?public`: the JSON file's top-level sections as named exports, as a module of its
 * own, so that a bundle keeps only the sections imported by name (lib/i18n.ts: the login page's
 * texts) while another import of the file brings the whole of it later.
 */
export function jsonSections(): Plugin {
  return {
    name: "flotilla-json-sections",
    enforce: "pre",
    resolveId(source, importer) {
      if (!source.endsWith(".json?public") || !importer) return null;
      return `${new URL(source, `file://${importer}`).pathname}?public`;
    },
    load(id) {
      if (!id.endsWith(".json?public")) return null;
      const data = JSON.parse(readFileSync(id.slice(0, -"?public".length), "utf8")) as Record<string, unknown>;
      return Object.entries(data)
        .map(([key, value]) => `export const ${key} = ${JSON.stringify(value)};`)
        .join("\n");
    },
  };
}

export default defineConfig({
  plugins: [
    react(),
    buildInfo(),
    jsonSections(),
    // Brotli and gzip copies of every text asset, which the server sends as they are.
    compression({
      algorithms: ["brotliCompress", "gzip"],
      include: /\.(js|css|html|svg|json)$/,
      threshold: 1024,
      skipIfLargerOrEqual: true,
    }),
  ],
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    // Every asset is a file under dist/assets (the CSP allows no inline code or data: scripts).
    assetsInlineLimit: 0,
    sourcemap: true,
    chunkSizeWarningLimit: 1500,
  },
});
