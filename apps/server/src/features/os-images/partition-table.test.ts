import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fatVolumeLabel, findBootPartition, readPartitions } from "./partition-table.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-partitions-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A FAT16 boot sector with this volume label (what mkfs.fat writes at bytes 38-61). */
function fat16BootSector(label: string): Buffer {
  const sector = Buffer.alloc(512);
  sector[38] = 0x29;
  sector.write(label.padEnd(11, " "), 43, "latin1");
  sector.write("FAT16   ", 54, "latin1");
  sector[510] = 0x55;
  sector[511] = 0xaa;
  return sector;
}

function fat32BootSector(label: string): Buffer {
  const sector = Buffer.alloc(512);
  sector[66] = 0x29;
  sector.write(label.padEnd(11, " "), 71, "latin1");
  sector.write("FAT32   ", 82, "latin1");
  sector[510] = 0x55;
  sector[511] = 0xaa;
  return sector;
}

async function withImage<T>(bytes: Buffer, use: (handle: fs.promises.FileHandle) => Promise<T>): Promise<T> {
  const file = path.join(dir, `image-${Math.random().toString(36).slice(2)}.img`);
  fs.writeFileSync(file, bytes);
  const handle = await fs.promises.open(file, "r");
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}

describe("the boot partition of a balenaOS image", () => {
  it("reads the FAT volume label of FAT16 and FAT32 boot sectors, and nothing from others", () => {
    expect(fatVolumeLabel(fat16BootSector("resin-boot"))).toBe("resin-boot");
    expect(fatVolumeLabel(fat32BootSector("RESIN-BOOT"))).toBe("RESIN-BOOT");
    expect(fatVolumeLabel(Buffer.alloc(512))).toBeUndefined();
    const ext4ish = Buffer.alloc(512);
    ext4ish[510] = 0x55;
    ext4ish[511] = 0xaa;
    expect(fatVolumeLabel(ext4ish)).toBeUndefined();
  });

  it("finds it in an MBR image: the first FAT partition labelled resin-boot, whatever its place", async () => {
    const image = Buffer.alloc(64 * 512);
    const entry = (index: number, type: number, start: number, sectors: number) => {
      image[446 + 16 * index + 4] = type;
      image.writeUInt32LE(start, 446 + 16 * index + 8);
      image.writeUInt32LE(sectors, 446 + 16 * index + 12);
    };
    entry(0, 0x83, 8, 8); // not FAT
    entry(1, 0x0e, 16, 16); // FAT, another label
    entry(2, 0x0c, 32, 16); // resin-boot
    entry(3, 0x05, 48, 16); // extended: skipped
    image[510] = 0x55;
    image[511] = 0xaa;
    fat16BootSector("flash-boot").copy(image, 16 * 512);
    fat32BootSector("RESIN-BOOT").copy(image, 32 * 512);
    await withImage(image, async (handle) => {
      expect((await readPartitions(handle, image.length)).map((p) => p.number)).toEqual([1, 2, 3]);
      expect(await findBootPartition(handle, image.length)).toEqual({
        number: 3,
        offset: 32 * 512,
        size: 16 * 512,
        name: undefined,
      });
    });
  });

  it("finds it in a GPT image behind its protective MBR, and ignores partitions past the image's end", async () => {
    const image = Buffer.alloc(128 * 512);
    image[446 + 4] = 0xee;
    image.writeUInt32LE(1, 446 + 8);
    image[510] = 0x55;
    image[511] = 0xaa;
    image.write("EFI PART", 512, "latin1");
    image.writeBigUInt64LE(2n, 512 + 72);
    image.writeUInt32LE(4, 512 + 80);
    image.writeUInt32LE(128, 512 + 84);
    const gptEntry = (index: number, first: number, last: number, name: string) => {
      const at = 2 * 512 + index * 128;
      image.fill(0xab, at, at + 16);
      image.writeBigUInt64LE(BigInt(first), at + 32);
      image.writeBigUInt64LE(BigInt(last), at + 40);
      image.write(name, at + 56, "utf16le");
    };
    gptEntry(0, 40, 71, "resin-boot");
    gptEntry(1, 72, 100, "resin-rootA");
    gptEntry(3, 120, 4000, "too-far");
    fat16BootSector("resin-boot").copy(image, 40 * 512);
    await withImage(image, async (handle) => {
      const partitions = await readPartitions(handle, image.length);
      expect(partitions.map((p) => p.name)).toEqual(["resin-boot", "resin-rootA"]);
      expect(await findBootPartition(handle, image.length)).toMatchObject({ number: 1, offset: 40 * 512 });
    });
  });

  it("finds nothing in a file without a partition table", async () => {
    await withImage(Buffer.alloc(4096, 7), async (handle) => {
      expect(await readPartitions(handle, 4096)).toEqual([]);
      expect(await findBootPartition(handle, 4096)).toBeUndefined();
    });
  });
});
