import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pipeline, Readable } from "node:stream";
import { pipeline as pipe } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import tar from "tar-stream";
import { FlotillaError } from "../../errors.ts";
import { byteCap } from "../../lib/byte-cap.ts";
import { normalise, PROJECT_MAX_UNPACKED_BYTES, stripTop } from "./project.ts";

/**
 * A pushed project archive kept on disk for the length of its build: the builder reads each
 * service's build context from it (the project reader keeps only the text files in memory).
 */
export type ProjectArchive = { file: string; stripTop: boolean };

/** Writes the upload to a file of the data directory's `builds/`; the caller removes it. */
export async function spoolArchive(source: Readable, dataDir: string): Promise<string> {
  const dir = path.join(dataDir, "builds");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${crypto.randomUUID()}.tar`);
  try {
    await pipe(source, fs.createWriteStream(file, { mode: 0o600 }));
  } catch (error) {
    fs.rmSync(file, { force: true });
    throw error;
  }
  return file;
}

export function removeArchive(file: string) {
  fs.rmSync(file, { force: true });
}

const tooLarge = () =>
  new FlotillaError(
    "payload_too_large",
    `A project archive is at most ${PROJECT_MAX_UNPACKED_BYTES / 1024 / 1024} MiB unpacked`,
  );

/**
 * The build context of one service: the archive's entries under `context` (project-relative,
 * `.` for all), re-rooted there, as the plain tar the Docker Engine API's /build takes. Only
 * files, directories and symbolic links are kept.
 */
export function contextTar(archive: ProjectArchive, context: string): Readable {
  const pack = tar.pack();
  const prefix = context === "." ? "" : `${context}/`;
  const copy = async () => {
    const raw = fs.createReadStream(archive.file);
    const head = await new Promise<Buffer>((resolve, reject) => {
      const probe = fs.createReadStream(archive.file, { start: 0, end: 1 });
      const chunks: Buffer[] = [];
      probe.on("data", (chunk) => chunks.push(chunk as Buffer));
      probe.on("end", () => resolve(Buffer.concat(chunks)));
      probe.on("error", reject);
    });
    const gzipped = head[0] === 0x1f && head[1] === 0x8b;
    const extract = tar.extract();
    const input = gzipped
      ? pipeline(raw, createGunzip(), byteCap(PROJECT_MAX_UNPACKED_BYTES, tooLarge), () => {})
      : raw;
    input.on("error", (error: Error) => extract.destroy(error));
    input.pipe(extract);
    for await (const entry of extract) {
      let name = normalise(entry.header.name);
      if (name && archive.stripTop) name = stripTop(name);
      const inside = name?.startsWith(prefix) ? name.slice(prefix.length) : undefined;
      const { type } = entry.header;
      if (!inside || (type !== "file" && type !== "directory" && type !== "symlink")) {
        entry.resume();
        continue;
      }
      const header = { ...entry.header, name: inside };
      if (type === "file") {
        await pipe(entry, pack.entry(header));
      } else {
        pack.entry(header);
        entry.resume();
      }
    }
    pack.finalize();
  };
  copy().catch((error: Error) => pack.destroy(error));
  return Readable.from(pack);
}
