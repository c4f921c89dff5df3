import fs from "node:fs/promises";
import path from "node:path";
import { compareOsVersions, parseOsVersion } from "@flotilla/domain";

/**
 * The balenaOS images the operator put into FLOTILLA_OS_IMAGES_DIR: one unzipped image per device
 * type and version, as balena publishes them, at `<device-type>/<version>.img` (the device type's
 * slug as /device-types/v1 names it, the version as the OS catalogue writes it), e.g.
 * `raspberrypi4-64/6.2.4.img` or `intel-nuc/6.0.13+rev1.img`.
 */

export type OsImage = {
  deviceType: string;
  /** The version as its file names it. */
  version: string;
  file: string;
  size: number;
};

/** A file name `<version>.img`: a semver with balena's `+revN` (no path parts). */
const IMAGE_FILE = /^(\d{1,9}\.\d{1,9}\.\d{1,9}(?:[-+][0-9A-Za-z.+-]{1,100})?)\.img$/;
/** Device type slugs are letters, digits, `_` and `-`: never a path. */
const SLUG = /^[\w-]{1,100}$/;

/** Where an image of this device type and version belongs (for the operator's instructions). */
export const osImagePath = (dir: string, deviceType: string, version: string) =>
  path.join(dir, deviceType, `${version}.img`);

/** The device type's images, newest version first; [] when it has none (or its folder is unreadable). */
export async function osImagesOf(dir: string, deviceType: string): Promise<OsImage[]> {
  if (!SLUG.test(deviceType)) return [];
  const folder = path.join(dir, deviceType);
  const names = await fs.readdir(folder).catch(() => [] as string[]);
  const images: OsImage[] = [];
  for (const name of names) {
    const version = IMAGE_FILE.exec(name)?.[1];
    if (!version || !parseOsVersion(version)) continue;
    const file = path.join(folder, name);
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat?.isFile()) images.push({ deviceType, version, file, size: stat.size });
  }
  return images.sort((a, b) => compareVersions(b.version, a.version));
}

const compareVersions = (a: string, b: string) => {
  const [left, right] = [parseOsVersion(a), parseOsVersion(b)];
  return left && right ? compareOsVersions(left, right) : a.localeCompare(b);
};

/**
 * The image of this device type and version (`latest`: the newest), matching balena's spellings of
 * one version: `6.2.4`, `v6.2.4`, `6.2.4+rev1.prod` for `6.2.4+rev1`.
 */
export async function findOsImage(dir: string, deviceType: string, version: string): Promise<OsImage | undefined> {
  const images = await osImagesOf(dir, deviceType);
  if (version === "latest") return images[0];
  const wanted = parseOsVersion(version);
  if (!wanted) return undefined;
  return images.find((image) => compareVersions(image.version, wanted.version) === 0);
}
