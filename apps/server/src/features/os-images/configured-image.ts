import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { FlotillaError } from "../../errors.ts";
import { type BootFile, copyPartition, writeBootFiles } from "./boot-partition.ts";
import type { OsImage } from "./image-files.ts";
import { findBootPartition, type Partition } from "./partition-table.ts";

/**
 * A configured image download: the image's boot partition is copied to a temporary file (never
 * the whole image), config.json (and the Wi-Fi settings) are written into that copy with mtools,
 * and the answer streams the image's bytes before the partition, the changed partition and the
 * bytes after it — exactly the image's size. The copy is removed when the stream ends or breaks.
 */

/** Configured downloads being prepared or streamed at once per instance: each holds a partition copy on disk. */
export const MAX_CONFIGURED_DOWNLOADS = 4;
/** Partition copies left by a process that died mid-download are removed at the next start after this. */
const STALE_COPY_MS = 24 * 3_600_000;
const COPY_PREFIX = "os-image-";

export type ImageDownload = { stream: Readable; size: number; fileName: string };

/** Where partition copies go: `<data dir>/tmp` (not /tmp, often a RAM disk), readable by this user only. */
export function partitionCopiesDir(dataDir: string): string {
  return path.join(dataDir, "tmp");
}

/** Removes partition copies older than a day (a crashed process's). */
export async function removeStaleCopies(dir: string, now = Date.now()): Promise<void> {
  const names = await fs.promises.readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((entry) => entry.startsWith(COPY_PREFIX))) {
    const file = path.join(dir, name);
    const stat = await fs.promises.stat(file).catch(() => undefined);
    if (stat && now - stat.mtimeMs > STALE_COPY_MS) await fs.promises.rm(file, { force: true });
  }
}

/** A counter of configured downloads in flight: `take` answers a release function, or undefined when full. */
export function createDownloadSlots(max = MAX_CONFIGURED_DOWNLOADS) {
  let used = 0;
  return {
    take(): (() => void) | undefined {
      if (used >= max) return undefined;
      used++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        used--;
      };
    },
    get inUse() {
      return used;
    },
  };
}

/** The image's boot partition; an image without one is the operator's to fix (503, naming the file). */
export async function bootPartitionOf(image: OsImage, imagesDir: string): Promise<Partition> {
  const handle = await fs.promises.open(image.file, "r");
  try {
    const partition = await findBootPartition(handle, image.size);
    if (partition) return partition;
  } finally {
    await handle.close();
  }
  throw new FlotillaError(
    "service_unavailable",
    `The balenaOS image ${path.relative(imagesDir, image.file)} on this server has no resin-boot partition, so it cannot be configured. Ask the operator to replace it with the image balena publishes.`,
  );
}

/** The image as it is (unconfigured). */
export function plainImage(image: OsImage, fileName: string): ImageDownload {
  return { stream: fs.createReadStream(image.file), size: image.size, fileName };
}

/**
 * The image with `files` written into its boot partition. `done` runs once when the copy is gone
 * (streamed, aborted, or failed before streaming): the caller's download slot is freed there.
 */
export async function configuredImage(
  image: OsImage,
  partition: Partition,
  files: BootFile[],
  copiesDir: string,
  fileName: string,
  done: () => void,
): Promise<ImageDownload> {
  await fs.promises.mkdir(copiesDir, { recursive: true, mode: 0o700 });
  const copy = path.join(copiesDir, `${COPY_PREFIX}${crypto.randomBytes(12).toString("hex")}.boot`);
  let finished = false;
  const cleanUp = async () => {
    if (finished) return;
    finished = true;
    await fs.promises.rm(copy, { force: true });
    done();
  };
  try {
    await copyPartition(image.file, partition, copy);
    await writeBootFiles(copy, copiesDir, files);
    // mtools writes inside the file system: the copy keeps the partition's size, so the total is the image's.
    if ((await fs.promises.stat(copy)).size !== partition.size) throw new Error("the boot partition copy changed size");
  } catch (error) {
    await cleanUp();
    throw new FlotillaError("service_unavailable", "This server could not configure the balenaOS image. Try again.", {
      cause: error,
    });
  }
  const end = partition.offset + partition.size;
  async function* bytes() {
    try {
      if (partition.offset > 0) yield* fs.createReadStream(image.file, { start: 0, end: partition.offset - 1 });
      yield* fs.createReadStream(copy);
      if (end < image.size) yield* fs.createReadStream(image.file, { start: end, end: image.size - 1 });
    } finally {
      await cleanUp();
    }
  }
  const stream = Readable.from(bytes(), { objectMode: false });
  // A stream destroyed before its first read never enters the generator: clean up there too.
  stream.once("close", () => void cleanUp());
  return { stream, size: image.size, fileName };
}
