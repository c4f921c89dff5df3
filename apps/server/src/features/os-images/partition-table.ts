import type { FileHandle } from "node:fs/promises";

/**
 * Where a balenaOS image's boot partition lies: read from its partition table (MBR, or GPT behind
 * a protective MBR) and the FAT boot sectors of its partitions. Reading only: the FAT itself is
 * written by mtools (boot-partition.ts).
 */

/** Images are laid out in 512-byte sectors (balenaOS's MBR and GPT images alike). */
const SECTOR = 512;
/** The label of balenaOS's boot partition (FAT): config.json lives at its root. */
export const BOOT_PARTITION_LABEL = "resin-boot";
/** GPT tables hold 128 entries by default; more than this is not a disk image we serve. */
const MAX_GPT_ENTRIES = 1024;
/** MBR types of extended partitions (their logical partitions come after the boot partition). */
const EXTENDED_TYPES = new Set([0x05, 0x0f, 0x85]);
const GPT_PROTECTIVE = 0xee;

export type Partition = {
  /** 1-based, as `/dev/sda1` counts. */
  number: number;
  /** Bytes from the start of the image. */
  offset: number;
  size: number;
  /** GPT's partition name; undefined on MBR. */
  name: string | undefined;
};

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

const hasBootSignature = (sector: Buffer) => sector.length >= SECTOR && sector[510] === 0x55 && sector[511] === 0xaa;

/** The primary partitions of an MBR, or the partitions of the GPT it protects; [] without a table. */
export async function readPartitions(handle: FileHandle, imageSize: number): Promise<Partition[]> {
  const mbr = await readAt(handle, 0, SECTOR);
  if (!hasBootSignature(mbr)) return [];
  const partitions: Partition[] = [];
  for (let index = 0; index < 4; index++) {
    const entry = 446 + 16 * index;
    const type = mbr[entry + 4] ?? 0;
    if (type === GPT_PROTECTIVE) return readGpt(handle, imageSize);
    const start = mbr.readUInt32LE(entry + 8);
    const sectors = mbr.readUInt32LE(entry + 12);
    if (type === 0 || EXTENDED_TYPES.has(type) || start === 0 || sectors === 0) continue;
    partitions.push({ number: index + 1, offset: start * SECTOR, size: sectors * SECTOR, name: undefined });
  }
  return partitions.filter((partition) => partition.offset + partition.size <= imageSize);
}

async function readGpt(handle: FileHandle, imageSize: number): Promise<Partition[]> {
  const header = await readAt(handle, SECTOR, SECTOR);
  if (header.length < 92 || header.toString("latin1", 0, 8) !== "EFI PART") return [];
  const entriesLba = Number(header.readBigUInt64LE(72));
  const count = header.readUInt32LE(80);
  const entrySize = header.readUInt32LE(84);
  if (count > MAX_GPT_ENTRIES || entrySize < 128 || entrySize > 4096 || entriesLba * SECTOR >= imageSize) return [];
  const table = await readAt(handle, entriesLba * SECTOR, count * entrySize);
  const partitions: Partition[] = [];
  for (let index = 0; index < count && (index + 1) * entrySize <= table.length; index++) {
    const entry = table.subarray(index * entrySize, (index + 1) * entrySize);
    if (entry.subarray(0, 16).every((byte) => byte === 0)) continue;
    const first = Number(entry.readBigUInt64LE(32));
    const last = Number(entry.readBigUInt64LE(40));
    if (last < first) continue;
    const name = entry.toString("utf16le", 56, 128).replace(/\0.*$/s, "");
    const partition = { number: index + 1, offset: first * SECTOR, size: (last - first + 1) * SECTOR, name };
    if (partition.offset + partition.size <= imageSize) partitions.push(partition);
  }
  return partitions;
}

/** The volume label of a FAT12/16/32 boot sector; undefined when the sector is not FAT's. */
export function fatVolumeLabel(bootSector: Buffer): string | undefined {
  if (!hasBootSignature(bootSector)) return undefined;
  const fat32 = bootSector.toString("latin1", 82, 87) === "FAT32" && bootSector[66] === 0x29;
  const fat16 = bootSector.toString("latin1", 54, 57) === "FAT" && bootSector[38] === 0x29;
  if (!fat32 && !fat16) return undefined;
  const at = fat32 ? 71 : 43;
  return bootSector.toString("latin1", at, at + 11).trimEnd();
}

/** The boot partition: the first FAT partition labelled resin-boot (or so named in the GPT). */
export async function findBootPartition(handle: FileHandle, imageSize: number): Promise<Partition | undefined> {
  for (const partition of await readPartitions(handle, imageSize)) {
    const label = fatVolumeLabel(await readAt(handle, partition.offset, SECTOR));
    if (label === undefined) continue;
    const wanted = BOOT_PARTITION_LABEL.toLowerCase();
    if (label.toLowerCase() === wanted || partition.name?.toLowerCase() === wanted) return partition;
  }
  return undefined;
}
