import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import type { Partition } from "./partition-table.ts";

/**
 * The boot partition of one download, copied out of its image into a file of its own, and the
 * files written into it with Debian's mtools (`mcopy -o -i file`): never a FAT writer of ours.
 */

const run = promisify(execFile);

/** mtools on a bare partition file: no disk geometry to check. */
const MTOOLS_ENV = { ...process.env, MTOOLS_SKIP_CHECK: "1" };
const MTOOLS_TIMEOUT_MS = 60_000;

/** A file for the boot partition: its path in the FAT (`config.json`, `system-connections/resin-wifi`) and text. */
export type BootFile = { path: string; content: string };

/** Copies the partition's bytes out of the image into `target` (mode 0600: it will hold a key). */
export async function copyPartition(image: string, partition: Partition, target: string): Promise<void> {
  await pipeline(
    fs.createReadStream(image, { start: partition.offset, end: partition.offset + partition.size - 1 }),
    fs.createWriteStream(target, { mode: 0o600, flags: "wx" }),
  );
}

/**
 * Writes the files into the FAT file system of `partitionFile`, replacing any already there
 * (`mcopy -o`), their folders made first (`mmd`). Each text is staged in `stagingDir` (mode 0600)
 * for mcopy and removed afterwards.
 */
export async function writeBootFiles(partitionFile: string, stagingDir: string, files: BootFile[]): Promise<void> {
  for (const [index, file] of files.entries()) {
    const folder = path.posix.dirname(file.path);
    // `-D s`: an existing folder is kept (mmd then exits 1, which says nothing about the FAT).
    if (folder !== ".") await mtools("mmd", ["-D", "s", "-i", partitionFile, `::${folder}`]).catch(() => undefined);
    const staged = path.join(stagingDir, `${path.basename(partitionFile)}.${index}`);
    await fs.promises.writeFile(staged, file.content, { mode: 0o600, flag: "wx" });
    try {
      await mtools("mcopy", ["-o", "-i", partitionFile, staged, `::${file.path}`]);
    } finally {
      await fs.promises.rm(staged, { force: true });
    }
  }
}

const mtools = (command: string, args: string[]) => run(command, args, { env: MTOOLS_ENV, timeout: MTOOLS_TIMEOUT_MS });
