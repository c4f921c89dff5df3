import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** dosfstools and mtools live in sbin on Debian: found there whatever the test's PATH. */
export const TOOLS_ENV = {
  ...process.env,
  PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin`,
  MTOOLS_SKIP_CHECK: "1",
};

const SECTOR = 512;
/** The boot partition starts at 1 MiB, as balenaOS images lay it out. */
export const BOOT_OFFSET = 2048 * SECTOR;

export type TestDiskImage = {
  file: string;
  size: number;
  bootOffset: number;
  bootSize: number;
  /** The bytes of the image outside its boot partition, hashed (they must come back unchanged). */
  outsideBootSha256: string;
};

/**
 * A small balenaOS-like disk image: an MBR with a FAT boot partition (mkfs.fat, label
 * resin-boot, holding a placeholder config.json and system-connections/resin-sample.ignore, as
 * balena's images do) and a second partition of random bytes standing for the root file system.
 */
export async function buildDiskImage(
  file: string,
  options: { bootKiB?: number; label?: string; rootKiB?: number } = {},
): Promise<TestDiskImage> {
  const work = fs.mkdtempSync(path.join(path.dirname(file), ".disk-"));
  try {
    const bootKiB = options.bootKiB ?? 8192;
    const boot = path.join(work, "boot.img");
    await run("mkfs.fat", ["-C", "-n", options.label ?? "resin-boot", boot, String(bootKiB)], { env: TOOLS_ENV });
    fs.writeFileSync(path.join(work, "config.json"), '{"deviceType":"raspberrypi4-64","persistentLogging":false}\n');
    fs.writeFileSync(path.join(work, "sample"), "[connection]\nid=resin-sample\n");
    await run("mcopy", ["-i", boot, path.join(work, "config.json"), "::config.json"], { env: TOOLS_ENV });
    await run("mmd", ["-i", boot, "::system-connections"], { env: TOOLS_ENV });
    await run("mcopy", ["-i", boot, path.join(work, "sample"), "::system-connections/resin-sample.ignore"], {
      env: TOOLS_ENV,
    });
    const bootBytes = fs.readFileSync(boot);
    const root = crypto.randomBytes((options.rootKiB ?? 512) * 1024);
    const mbr = Buffer.alloc(BOOT_OFFSET);
    const entry = (index: number, type: number, start: number, sectors: number) => {
      const at = 446 + 16 * index;
      mbr[at] = index === 0 ? 0x80 : 0;
      mbr[at + 4] = type;
      mbr.writeUInt32LE(start, at + 8);
      mbr.writeUInt32LE(sectors, at + 12);
    };
    entry(0, 0x0c, BOOT_OFFSET / SECTOR, bootBytes.length / SECTOR);
    entry(1, 0x83, (BOOT_OFFSET + bootBytes.length) / SECTOR, root.length / SECTOR);
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    // Random bytes after the MBR too: a download must carry them unchanged.
    crypto.randomBytes(4096).copy(mbr, 4096);
    const trailer = crypto.randomBytes(64 * 1024);
    fs.writeFileSync(file, Buffer.concat([mbr, bootBytes, root, trailer]));
    const outside = crypto.createHash("sha256").update(mbr).update(root).update(trailer).digest("hex");
    return {
      file,
      size: mbr.length + bootBytes.length + root.length + trailer.length,
      bootOffset: BOOT_OFFSET,
      bootSize: bootBytes.length,
      outsideBootSha256: outside,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The image's bytes outside the boot partition, hashed as buildDiskImage hashes them. */
export function outsideBootSha256(file: string, image: Pick<TestDiskImage, "bootOffset" | "bootSize">): string {
  const bytes = fs.readFileSync(file);
  return crypto
    .createHash("sha256")
    .update(bytes.subarray(0, image.bootOffset))
    .update(bytes.subarray(image.bootOffset + image.bootSize))
    .digest("hex");
}

/** A file of the image's boot partition, read with mtools: `mtype -i image@@offset ::path`. */
export async function readBootFile(file: string, bootOffset: number, filePath: string): Promise<string> {
  const { stdout } = await run("mtype", ["-i", `${file}@@${bootOffset}`, `::${filePath}`], { env: TOOLS_ENV });
  return stdout;
}
