import fs from "node:fs";
import path from "node:path";
import type { ResourceHooks } from "../../odata/index.ts";

/**
 * Where git pushes live (docs/releases.md "Git push"): one bare repository per fleet,
 * `{data dir}/git/fleets/{fleet id}.git`, named from the fleet's id (never from what a client
 * sent), and the pre-receive hook in `{data dir}/git/hooks`.
 */
export const gitRoot = (dataDir: string) => path.resolve(dataDir, "git");

export const fleetRepository = (dataDir: string, fleet: number) =>
  path.join(gitRoot(dataDir), "fleets", `${Math.trunc(fleet)}.git`);

/** A deleted fleet takes its repository with it, once the deletion committed. */
export const fleetRepositoryHooks = (dataDir: string): ResourceHooks => ({
  afterDelete({ ids, afterCommit }) {
    afterCommit(() =>
      Promise.all(
        ids.map((id) => fs.promises.rm(fleetRepository(dataDir, Number(id)), { recursive: true, force: true })),
      ).then(() => undefined),
    );
  },
});
