import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
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

/**
 * MUI X DataGrid's MUI adapter (`@mui/x-data-grid/material`) imports Autocomplete, Tabs, Tab and
 * Switch for its filter and column panels, which the dashboard's grids never open (no column
 * menu, no toolbar): 17 KB over the wire on the device list (issue performance-2). Imported from
 * there, each resolves to a wrapper that loads the real component the first time it renders
 * (nothing shows meanwhile); every other import of them is untouched.
 */
export function lazyGridParts(parts = ["Autocomplete", "Tabs", "Tab", "Switch"]): Plugin {
  const prefix = "\0flotilla-grid-part:";
  return {
    name: "flotilla-lazy-grid-parts",
    apply: "build",
    enforce: "pre",
    resolveId(source, importer) {
      if (!importer || !/[\\/]@mui[\\/]x-data-grid[\\/]material[\\/]/.test(importer)) return null;
      const part = /^@mui\/material\/(\w+)$/.exec(source)?.[1];
      return part && parts.includes(part) ? `${prefix}${part}` : null;
    },
    load(id) {
      if (!id.startsWith(prefix)) return null;
      const part = id.slice(prefix.length);
      return [
        `import { createElement, lazy, Suspense } from "react";`,
        `const Part = lazy(() => import("@mui/material/${part}"));`,
        `export default function Grid${part}(props) {`,
        `  return createElement(Suspense, { fallback: null }, createElement(Part, props));`,
        `}`,
      ].join("\n");
    },
  };
}

/**
 * The modules the first signed-in page (`/fleets`) runs, in one chunk (issue performance-2).
 * Rolldown's automatic chunking gave that page about 100 chunks, each with its own response
 * headers (0.4 KB) and its own compression window: together they weighed 90 KB more than the
 * same code in one file. `roots` are the modules that page imports, statically or not (the app,
 * its layout, the fleet list, the texts it shows); the chunk takes their static imports, less
 * everything the plain login page can load (main.tsx's imports without the app), which stays in
 * the chunks the login page already shares with the app. Other pages keep their own chunks and
 * take what they share with `/fleets` from this one, which is already in the cache.
 */
export function firstPageChunk(roots: string[]): { plugin: Plugin; test: (id: string) => boolean } {
  const captured = new Set<string>();
  const plugin: Plugin = {
    name: "flotilla-first-page-chunk",
    apply: "build",
    buildEnd(error) {
      captured.clear();
      if (error) return;
      const missing = roots.filter((root) => !this.getModuleInfo(root));
      if (missing.length > 0) this.error(`first page chunk: no module ${missing.join(", ")}`);
      const rootIds = new Set(roots);
      const walk = (starts: Iterable<string>, dynamic: boolean, stop: Set<string>) => {
        const seen = new Set<string>();
        const queue = [...starts];
        while (queue.length > 0) {
          const id = queue.pop() as string;
          if (seen.has(id) || stop.has(id)) continue;
          seen.add(id);
          const info = this.getModuleInfo(id);
          if (!info) continue;
          queue.push(...info.importedIds);
          if (dynamic) queue.push(...info.dynamicallyImportedIds);
        }
        return seen;
      };
      const entries = [...this.getModuleIds()].filter((id) => this.getModuleInfo(id)?.isEntry);
      // Whatever the entry can load without the app: the plain login page and what it shares.
      const withoutApp = walk(entries, true, rootIds);
      for (const id of walk(rootIds, false, new Set())) if (!withoutApp.has(id)) captured.add(id);
    },
  };
  return { plugin, test: (id) => captured.has(id) };
}

const source = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));
// What `/fleets` loads with an empty cache: the app and the chunks it imports on the way there
// (`PAGE_WEIGHT_FILES=1 node --import tsx scripts/page-weight.ts` lists them).
const firstPage = firstPageChunk(
  [
    "app.tsx",
    "components/app-layout.tsx",
    "features/fleets/fleets-page.tsx",
    "features/identity/data.ts",
    "lib/pine.ts",
    "locales/en.json",
  ].map(source),
);

export default defineConfig({
  plugins: [
    react(),
    buildInfo(),
    jsonSections(),
    firstPage.plugin,
    lazyGridParts(),
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
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [{ name: "first-page", test: firstPage.test, includeDependenciesRecursively: false }],
        },
      },
    },
  },
});
