import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import tar from "tar-stream";
import { afterEach, describe, expect, it } from "vitest";
import { CliError } from "./errors.ts";
import { ignoreRules, listProject, packFiles, packProject, projectKind } from "./pack.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A project directory holding `files` (path → content). */
function project(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-cli-pack-"));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** The entries of a gzip tar, read back with tar-stream. */
async function unpack(archive: Buffer) {
  const extract = tar.extract();
  Readable.from([archive]).pipe(createGunzip()).pipe(extract);
  const entries: { name: string; type: string; mode: number; content: string; linkname?: string }[] = [];
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    entries.push({
      name: entry.header.name,
      type: entry.header.type ?? "file",
      mode: entry.header.mode ?? 0,
      content: Buffer.concat(chunks).toString("utf8"),
      ...(entry.header.linkname ? { linkname: entry.header.linkname } : {}),
    });
  }
  return entries;
}

const fileNames = (dir: string) =>
  listProject(dir)
    .filter((entry) => entry.type === "file")
    .map((entry) => entry.name);

describe("ignoreRules", () => {
  it("applies .dockerignore as Docker does: top-level names, globs, ** and ! exceptions, comments", () => {
    const rules = ignoreRules("# build output\ndist\n*.log\n**/*.tmp\n!keep.log\n\n/secrets/\n");
    expect(rules.isIgnored("dist")).toBe(true);
    expect(rules.isIgnored("dist/app.js")).toBe(true);
    expect(rules.isIgnored("src/dist")).toBe(false); // unlike .gitignore, a bare name matches at the top only
    expect(rules.isIgnored("debug.log")).toBe(true);
    expect(rules.isIgnored("keep.log")).toBe(false);
    expect(rules.isIgnored("logs/debug.log")).toBe(false); // * stays within one directory
    expect(rules.isIgnored("a/b/c.tmp")).toBe(true);
    expect(rules.isIgnored("secrets/key.pem")).toBe(true);
    expect(rules.isIgnored("src/index.ts")).toBe(false);
    expect(rules.hasExceptions).toBe(true);
  });

  it("never ignores the files the builder reads", () => {
    const rules = ignoreRules("*\n");
    expect(rules.isIgnored("main.py")).toBe(true);
    for (const name of ["docker-compose.yml", "docker-compose.yaml", "Dockerfile", "balena.yml", ".dockerignore"]) {
      expect(rules.isIgnored(name)).toBe(false);
    }
  });
});

describe("listProject", () => {
  it("skips .git and node_modules at any depth and what .dockerignore names", () => {
    const dir = project({
      "docker-compose.yml": "services: {}\n",
      ".dockerignore": "build\n*.log\n",
      ".git/HEAD": "ref: refs/heads/main\n",
      "node_modules/x/index.js": "",
      "web/node_modules/y/index.js": "",
      "web/src/app.js": "console.log(1)\n",
      "web/.git": "gitdir: ../.git/modules/web\n",
      "build/out.bin": "binary",
      "trace.log": "noise",
      "web/trace.log": "kept: * matches one directory",
    });
    expect(fileNames(dir)).toEqual([".dockerignore", "docker-compose.yml", "web/src/app.js", "web/trace.log"]);
  });

  it("walks into an ignored directory when a ! rule brings a file back", () => {
    const dir = project({
      Dockerfile: "FROM alpine\n",
      ".dockerignore": "assets\n!assets/logo.png\n",
      "assets/logo.png": "png",
      "assets/big.psd": "psd",
    });
    expect(fileNames(dir)).toEqual([".dockerignore", "Dockerfile", "assets/logo.png"]);
  });
});

describe("projectKind", () => {
  it("needs a compose file or a Dockerfile at the top", () => {
    expect(projectKind(project({ "docker-compose.yaml": "" }))).toEqual({
      file: "docker-compose.yaml",
      kind: "compose",
    });
    expect(projectKind(project({ Dockerfile: "", "docker-compose.yml": "" })).kind).toBe("compose");
    expect(projectKind(project({ Dockerfile: "FROM alpine" }))).toEqual({ file: "Dockerfile", kind: "dockerfile" });
    const dir = project({ "app/Dockerfile": "FROM alpine", "README.md": "" });
    expect(() => projectKind(dir)).toThrow(CliError);
    expect(() => projectKind(dir)).toThrow(/no docker-compose.yml, docker-compose.yaml or Dockerfile/);
  });
});

describe("packProject", () => {
  it("packs a gzip tar that reads back with the same files, directories, modes and links", async () => {
    const dir = project({
      "docker-compose.yml": "services:\n  main:\n    build: ./main\n",
      "main/Dockerfile": "FROM alpine\n",
      "main/start.sh": "#!/bin/sh\necho hi\n",
      "main/ünïcode.txt": "héllo wörld\n",
      ".dockerignore": "*.secret\n",
      "token.secret": "no",
      "node_modules/left/out.js": "",
    });
    fs.chmodSync(path.join(dir, "main/start.sh"), 0o755);
    fs.symlinkSync("start.sh", path.join(dir, "main/run.sh"));
    const archive = await packProject(dir);
    expect(archive.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    const entries = await unpack(archive);
    expect(entries.map((entry) => `${entry.type} ${entry.name}`)).toEqual([
      "file .dockerignore",
      "file docker-compose.yml",
      "directory main",
      "file main/Dockerfile",
      "symlink main/run.sh",
      "file main/start.sh",
      "file main/ünïcode.txt",
    ]);
    const byName = new Map(entries.map((entry) => [entry.name, entry]));
    expect(byName.get("docker-compose.yml")?.content).toBe("services:\n  main:\n    build: ./main\n");
    expect(byName.get("main/ünïcode.txt")?.content).toBe("héllo wörld\n");
    expect((byName.get("main/start.sh")?.mode ?? 0) & 0o777).toBe(0o755);
    expect(byName.get("main/run.sh")?.linkname).toBe("start.sh");
  });

  it("refuses a directory without a build file, a missing directory, and an archive over the limit", async () => {
    await expect(packProject(project({ "index.js": "" }))).rejects.toThrow(/has no docker-compose.yml/);
    await expect(packProject("/nonexistent/flotilla-project")).rejects.toThrow(/no such directory/);
    const big = project({ Dockerfile: "FROM alpine\n" });
    fs.writeFileSync(
      path.join(big, "random.bin"),
      Buffer.from(Array.from({ length: 200_000 }, () => Math.random() * 256)),
    );
    await expect(packProject(big, { maxBytes: 64 * 1024 })).rejects.toThrow(/larger than .* packed/);
  });
});

describe("packFiles", () => {
  it("packs in-memory files", async () => {
    const entries = await unpack(await packFiles([{ name: "docker-compose.yml", content: "services: {}\n" }]));
    expect(entries).toEqual([
      expect.objectContaining({ name: "docker-compose.yml", type: "file", content: "services: {}\n" }),
    ]);
  });
});
