import crypto from "node:crypto";
import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import { FlotillaError } from "../../errors.ts";
import type { AssetLinks } from "./asset-links.ts";
import type { AssetContent } from "./assets.ts";

/**
 * Multipart uploads of large release assets, as balena-sdk's `release.asset.upload` does them
 * for files over 5 MiB: `POST /v7/release_asset({id})/beginUpload {asset: {filename,
 * content_type, size, chunk_size}}` answers `{asset: {uuid, uploadParts: [{url, chunkSize,
 * partNumber}]}}`; the client PUTs each part to its pre-signed `url` (no token, answered with
 * an ETag); `POST /v7/release_asset({id})/commitUpload {uuid, providerCommitData: {Parts:
 * [{PartNumber, ETag}]}}` joins the parts and stores the file through the data API's write.
 * Pending uploads live as files under `$FLOTILLA_DATA_DIR/storage/release-asset-uploads/{uuid}`.
 */
export const ASSET_MAX_BYTES = 2 * 1024 * 1024 * 1024;
/** S3's bounds, which balena's clients are written for. */
export const PART_MIN_BYTES = 5 * 1024 * 1024;
export const PART_MAX_BYTES = 100 * 1024 * 1024;
const MAX_PARTS = 10_000;
/** An upload not committed within a day is forgotten (its parts removed on the next begin). */
const UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;

export const beginBody = z.object({
  asset: z.object({
    filename: z.string().min(1).max(255),
    content_type: z.string().min(1).max(255),
    size: z.number().int().min(1).max(ASSET_MAX_BYTES, `A release asset is at most ${ASSET_MAX_BYTES} bytes`),
    chunk_size: z
      .number()
      .int()
      .min(PART_MIN_BYTES, `chunk_size is at least ${PART_MIN_BYTES} bytes`)
      .max(PART_MAX_BYTES, `chunk_size is at most ${PART_MAX_BYTES} bytes`),
  }),
});

export const commitBody = z.object({
  uuid: z.string().regex(/^[0-9a-f-]{36}$/, "uuid must be the one beginUpload answered"),
  providerCommitData: z.object({
    Parts: z
      .array(z.object({ PartNumber: z.number().int().min(1).max(MAX_PARTS), ETag: z.string().max(100) }))
      .min(1)
      .max(MAX_PARTS),
  }),
});

type Pending = {
  asset: number;
  actor: number;
  filename: string;
  content_type: string;
  size: number;
  chunkSize: number;
  parts: number;
  createdAt: number;
};

export const uploadsDirectory = (dataDir: string) => path.join(dataDir, "storage", "release-asset-uploads");
const partPath = (uuid: string, part: number) => `/release-asset/v1/uploads/${uuid}/parts/${part}`;
const partFile = (dir: string, part: number) => path.join(dir, `part-${part}`);

export function assetUploads({ dataDir, links }: { dataDir: string; links: AssetLinks }) {
  const root = uploadsDirectory(dataDir);
  const dirOf = (uuid: string) => path.join(root, uuid);

  async function readPending(uuid: string): Promise<Pending | undefined> {
    const text = await fs.readFile(path.join(dirOf(uuid), "upload.json"), "utf8").catch(() => undefined);
    const pending = text ? (JSON.parse(text) as Pending) : undefined;
    return pending && Date.now() - pending.createdAt < UPLOAD_TTL_MS ? pending : undefined;
  }

  /** Removes uploads older than their time to live (abandoned by their clients). */
  async function sweep() {
    const names = await fs.readdir(root).catch(() => [] as string[]);
    await Promise.all(
      names.map(async (name) => {
        const stat = await fs.stat(dirOf(name)).catch(() => undefined);
        if (stat && Date.now() - stat.mtimeMs > UPLOAD_TTL_MS)
          await fs.rm(dirOf(name), { recursive: true, force: true });
      }),
    );
  }

  return {
    /** Starts an upload of `asset` (the caller's right to change it already checked). */
    async begin(asset: number, actor: number, body: z.infer<typeof beginBody>["asset"]) {
      await sweep();
      const parts = Math.ceil(body.size / body.chunk_size);
      if (parts > MAX_PARTS) throw new FlotillaError("bad_request", `An upload has at most ${MAX_PARTS} parts`);
      const uuid = crypto.randomUUID();
      await fs.mkdir(dirOf(uuid), { recursive: true });
      const pending: Pending = {
        asset,
        actor,
        filename: body.filename,
        content_type: body.content_type,
        size: body.size,
        chunkSize: body.chunk_size,
        parts,
        createdAt: Date.now(),
      };
      await fs.writeFile(path.join(dirOf(uuid), "upload.json"), JSON.stringify(pending));
      const uploadParts = Array.from({ length: parts }, (_, index) => ({
        url: links.sign(partPath(uuid, index + 1), Date.now(), UPLOAD_TTL_MS / 1000),
        chunkSize: index + 1 < parts ? body.chunk_size : body.size - index * body.chunk_size,
        partNumber: index + 1,
      }));
      return { asset: { uuid, uploadParts } };
    },

    /** Stores one part sent to its signed link; answers its ETag (the MD5 of its bytes, as S3's). */
    async putPart(uuid: string, part: number, body: Readable): Promise<string> {
      const pending = await readPending(uuid);
      if (!pending || part < 1 || part > pending.parts) throw new FlotillaError("not_found", "No such upload part");
      const expected =
        part < pending.parts ? pending.chunkSize : pending.size - (pending.parts - 1) * pending.chunkSize;
      const hash = crypto.createHash("md5");
      let seen = 0;
      const count = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          seen += chunk.length;
          hash.update(chunk);
          if (seen > expected) done(new FlotillaError("payload_too_large", `Part ${part} is ${expected} bytes`));
          else done(null, chunk);
        },
      });
      const target = partFile(dirOf(uuid), part);
      const staging = `${target}.${crypto.randomBytes(6).toString("hex")}.tmp`;
      try {
        await pipeline(body, count, createWriteStream(staging));
        if (seen !== expected) {
          throw new FlotillaError("bad_request", `Part ${part} is ${expected} bytes, ${seen} were sent`);
        }
        await fs.rename(staging, target);
      } finally {
        await fs.rm(staging, { force: true });
      }
      const etag = hash.digest("hex");
      await fs.writeFile(`${target}.etag`, etag);
      return etag;
    },

    /**
     * Checks the parts the client names against those received and answers the file to store;
     * `done` removes the upload once the write committed.
     */
    async complete(asset: number, actor: number, body: z.infer<typeof commitBody>) {
      const pending = await readPending(body.uuid);
      if (!pending || pending.asset !== asset || pending.actor !== actor) {
        throw new FlotillaError("not_found", "No upload with this uuid for this release asset");
      }
      const named = [...body.providerCommitData.Parts].sort((a, b) => a.PartNumber - b.PartNumber);
      if (named.length !== pending.parts || named.some((p, index) => p.PartNumber !== index + 1)) {
        throw new FlotillaError("bad_request", `The upload has ${pending.parts} parts: name each once`);
      }
      const dir = dirOf(body.uuid);
      for (const { PartNumber, ETag } of named) {
        const stored = await fs.readFile(`${partFile(dir, PartNumber)}.etag`, "utf8").catch(() => undefined);
        if (!stored) throw new FlotillaError("bad_request", `Part ${PartNumber} was not uploaded`);
        if (stored !== ETag.replace(/"/g, "")) {
          throw new FlotillaError("bad_request", `The ETag of part ${PartNumber} does not match its bytes`);
        }
      }
      const content: AssetContent = {
        filename: pending.filename,
        content_type: pending.content_type,
        size: pending.size,
        async writeTo(file) {
          const out = await fs.open(file, "w");
          try {
            for (let part = 1; part <= pending.parts; part++) await out.write(await fs.readFile(partFile(dir, part)));
          } finally {
            await out.close();
          }
        },
      };
      return { content, done: () => fs.rm(dir, { recursive: true, force: true }) };
    },

    /** The upload and part a signed part link names, when its signature holds. */
    checkPartLink(uuid: string, part: string, query: { expires?: unknown; signature?: unknown }) {
      const verdict = links.check(partPath(uuid, Number(part)), query);
      if (verdict === "expired") throw new FlotillaError("forbidden", "This upload link has expired");
      if (verdict !== "valid") throw new FlotillaError("forbidden", "This upload link is not valid");
    },
  };
}
