import fs from "node:fs/promises";
import path from "node:path";

/**
 * What may be attached to a support ticket (docs/support.md): images, text and logs, PDF, and
 * zip, tar and gzip archives. The extension chooses the type (the client's Content-Type is not
 * believed) and the first bytes must fit it: a magic number for binary formats, and for text
 * UTF-8 without NUL bytes. SVG and HTML are not accepted (they run script when opened), and
 * downloads are served as attachments with `nosniff` anyway.
 */
type Kind = { contentType: string; fits: (bytes: Buffer) => boolean };

const startsWith = (bytes: Buffer, ...signature: number[]) =>
  bytes.length >= signature.length && signature.every((byte, index) => bytes[index] === byte);

const png = (b: Buffer) => startsWith(b, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const jpeg = (b: Buffer) => startsWith(b, 0xff, 0xd8, 0xff);
const gif = (b: Buffer) =>
  b.subarray(0, 6).toString("latin1") === "GIF87a" || b.subarray(0, 6).toString("latin1") === "GIF89a";
const webp = (b: Buffer) =>
  b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP";
const pdf = (b: Buffer) => b.subarray(0, 5).toString("latin1") === "%PDF-";
// A zip starts with a local file header, or is empty (end of central directory only).
const zip = (b: Buffer) => startsWith(b, 0x50, 0x4b, 0x03, 0x04) || startsWith(b, 0x50, 0x4b, 0x05, 0x06);
const gzip = (b: Buffer) => startsWith(b, 0x1f, 0x8b);
const tar = (b: Buffer) => b.subarray(257, 262).toString("latin1") === "ustar";
/** Text: valid UTF-8 with no NUL byte (a binary file renamed .log fails this). */
const text = (b: Buffer) => {
  if (b.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
};

const TEXT: Kind = { contentType: "text/plain; charset=utf-8", fits: text };
const KINDS: Record<string, Kind> = {
  png: { contentType: "image/png", fits: png },
  jpg: { contentType: "image/jpeg", fits: jpeg },
  jpeg: { contentType: "image/jpeg", fits: jpeg },
  gif: { contentType: "image/gif", fits: gif },
  webp: { contentType: "image/webp", fits: webp },
  pdf: { contentType: "application/pdf", fits: pdf },
  zip: { contentType: "application/zip", fits: zip },
  tar: { contentType: "application/x-tar", fits: tar },
  gz: { contentType: "application/gzip", fits: gzip },
  tgz: { contentType: "application/gzip", fits: gzip },
  txt: TEXT,
  log: TEXT,
  md: TEXT,
  csv: { contentType: "text/csv; charset=utf-8", fits: text },
  json: { contentType: "application/json", fits: text },
  yml: TEXT,
  yaml: TEXT,
  conf: TEXT,
  ini: TEXT,
  toml: TEXT,
};

export const ALLOWED_EXTENSIONS = Object.keys(KINDS);

/** A file name safe to store and to put in a Content-Disposition header: no path, no control or quote characters. */
export function cleanFileName(raw: string): string {
  const base = path.basename(raw.replaceAll("\\", "/")).normalize("NFC");
  const cleaned = [...base]
    .map((char) => (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f || char === '"' ? "_" : char))
    .join("")
    .trim()
    .slice(-200);
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "attachment" : cleaned;
}

/** The content type of an allowed file whose bytes fit its extension; undefined otherwise. */
export function attachmentType(fileName: string, bytes: Buffer): string | undefined {
  const lower = fileName.toLowerCase();
  const extension = lower.endsWith(".tar.gz") ? "gz" : path.extname(lower).slice(1);
  const kind = KINDS[extension];
  if (!kind || bytes.length === 0) return undefined;
  return kind.fits(bytes) ? kind.contentType : undefined;
}

/** The stored path of an attachment, relative to the data directory: one directory per organization. */
export const storedPathOf = (organization: number, id: number) =>
  path.join("storage", "support", String(organization), String(id));

/** Deleted organizations leave no attachment behind (their rows went with them; run after the deletion commits). */
export async function removeOrganizationSupportFiles(dataDir: string, organizationIds: number[]) {
  await Promise.all(
    organizationIds.map((id) =>
      fs.rm(path.join(dataDir, "storage", "support", String(id)), { recursive: true, force: true }),
    ),
  );
}
