import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import dockerignore from "@balena/dockerignore";
import tar from "tar-stream";
import { CliError } from "./errors.ts";

/**
 * Packing a project for the builder (docs/releases.md "The builder"): a gzip tar of the project
 * directory, with `.dockerignore` applied as Docker applies it, and `.git` and `node_modules`
 * always left out.
 */

/** The builder takes at most this much (compressed). */
export const PROJECT_MAX_BYTES = 64 * 1024 * 1024;
/** Left out at any depth, whatever `.dockerignore` says. */
export const ALWAYS_SKIPPED = new Set([".git", "node_modules"]);
export const COMPOSE_FILES = ["docker-compose.yml", "docker-compose.yaml"];
/** Sent even when `.dockerignore` names them, as `docker build` sends its Dockerfile: the builder needs them. */
const ALWAYS_SENT = new Set([...COMPOSE_FILES, "Dockerfile", "balena.yml", "balena.yaml", ".dockerignore"]);

export interface ProjectEntry {
  /** Path inside the project, `/`-separated. */
  name: string;
  type: "file" | "directory" | "symlink";
  size: number;
  mode: number;
  mtime: Date;
  linkname?: string;
}

/** Whether a project path is left out: `isIgnored("dist/app.js")`. */
export function ignoreRules(dockerignoreText: string): { isIgnored(name: string): boolean; hasExceptions: boolean } {
  const lines = dockerignoreText
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const rules = dockerignore({ ignorecase: false }).add(lines);
  return {
    isIgnored: (name) => !ALWAYS_SENT.has(name) && rules.ignores(name),
    hasExceptions: lines.some((line) => line.startsWith("!")),
  };
}

/** The build file at the top of `dir`: a compose file, else a Dockerfile; a CliError when neither is there. */
export function projectKind(dir: string): { file: string; kind: "compose" | "dockerfile" } {
  for (const file of COMPOSE_FILES) if (isFile(path.join(dir, file))) return { file, kind: "compose" };
  if (isFile(path.join(dir, "Dockerfile"))) return { file: "Dockerfile", kind: "dockerfile" };
  throw new CliError(
    `${dir} has no docker-compose.yml, docker-compose.yaml or Dockerfile at its top: a project needs one of them`,
  );
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The entries of the project at `dir` that are sent, sorted by name (so the same tree packs the
 * same way). A directory that is ignored is not walked unless a `!` rule may bring a file back.
 */
export function listProject(dir: string): ProjectEntry[] {
  const root = path.resolve(dir);
  let ignoreText = "";
  try {
    ignoreText = fs.readFileSync(path.join(root, ".dockerignore"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const rules = ignoreRules(ignoreText);
  const entries: ProjectEntry[] = [];
  const walk = (relative: string) => {
    const names = fs.readdirSync(path.join(root, relative)).sort();
    for (const base of names) {
      if (ALWAYS_SKIPPED.has(base)) continue;
      const name = relative ? `${relative}/${base}` : base;
      const stat = fs.lstatSync(path.join(root, name));
      const ignored = rules.isIgnored(name);
      const common = { name, mode: stat.mode & 0o7777, mtime: stat.mtime };
      if (stat.isDirectory()) {
        if (!ignored) entries.push({ ...common, type: "directory", size: 0 });
        if (!ignored || rules.hasExceptions) walk(name);
      } else if (!ignored && stat.isFile()) {
        entries.push({ ...common, type: "file", size: stat.size });
      } else if (!ignored && stat.isSymbolicLink()) {
        entries.push({ ...common, type: "symlink", size: 0, linkname: fs.readlinkSync(path.join(root, name)) });
      }
      // sockets, FIFOs and devices have no place in a build context
    }
  };
  walk("");
  return entries;
}

/** Collects a stream into one buffer, failing once it grows past `maxBytes`. */
async function collect(source: NodeJS.ReadableStream, maxBytes: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      throw new CliError(
        `${what} is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB packed: the builder takes at most that`,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The project at `dir` as a gzip tar (checked for a build file first). */
export async function packProject(dir: string, { maxBytes = PROJECT_MAX_BYTES } = {}): Promise<Buffer> {
  const root = path.resolve(dir);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(root);
  } catch {
    throw new CliError(`${dir}: no such directory`);
  }
  if (!stat.isDirectory()) throw new CliError(`${dir} is not a directory`);
  projectKind(root);
  const entries = listProject(root);
  const pack = tar.pack();
  const gzip = createGzip();
  const output = collect(pack.pipe(gzip), maxBytes, "The project");
  const writing = (async () => {
    for (const entry of entries) {
      const header = { name: entry.name, mode: entry.mode, mtime: entry.mtime };
      if (entry.type === "file") {
        const sink = pack.entry({ ...header, type: "file", size: entry.size });
        await pipeline(fs.createReadStream(path.join(root, entry.name)), sink);
      } else if (entry.type === "symlink") {
        pack.entry({ ...header, type: "symlink", linkname: entry.linkname ?? "" });
      } else {
        pack.entry({ ...header, type: "directory" });
      }
    }
    pack.finalize();
  })();
  try {
    const [, archive] = await Promise.all([writing, output]);
    return archive;
  } catch (error) {
    pack.destroy();
    gzip.destroy();
    await Promise.allSettled([writing, output]);
    throw error;
  }
}

/** A gzip tar of the given in-memory files (`deploy` sends just its compose file). */
export async function packFiles(files: { name: string; content: string | Buffer }[]): Promise<Buffer> {
  const pack = tar.pack();
  const output = collect(pack.pipe(createGzip()), PROJECT_MAX_BYTES, "The archive");
  for (const file of files) pack.entry({ name: file.name, mode: 0o644, mtime: new Date() }, file.content);
  pack.finalize();
  return output;
}
