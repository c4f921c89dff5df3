import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");
const STAMP = path.join(ROOT, "apps/web/dist/build-info.json");
const SOURCES = [
  "apps/web/src",
  "apps/web/public",
  "apps/web/index.html",
  "apps/web/vite.config.ts",
  "packages/domain/src",
];

function newestChange(entry) {
  const full = path.join(ROOT, entry);
  if (!fs.existsSync(full)) return 0;
  const stat = fs.statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of fs.readdirSync(full)) newest = Math.max(newest, newestChange(path.join(entry, child)));
  return newest;
}

/** Builds the dashboard when it was never built or its sources changed since the last build. */
export function buildWebIfStale() {
  const builtAt = fs.existsSync(STAMP) ? fs.statSync(STAMP).mtimeMs : 0;
  if (builtAt > Math.max(...SOURCES.map(newestChange))) return;
  process.stdout.write("Building the dashboard (apps/web)...\n");
  const result = spawnSync("npm", ["run", "build", "-w", "@flotilla/web"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write("flotilla: the dashboard build failed\n");
    process.exit(result.status ?? 1);
  }
}
