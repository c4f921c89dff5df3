import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";

declare module "vitest" {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}

/** One empty PGlite cluster per run, copied into each spec's fresh data dir (see usePgliteTemplate). */
export default async function setup({ provide }: { provide: (key: "pgliteTemplate", value: string) => void }) {
  if (process.env.DATABASE_URL) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-e2e-pglite-"));
  const db = new PGlite(dir);
  await db.waitReady;
  await db.close();
  provide("pgliteTemplate", dir);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
