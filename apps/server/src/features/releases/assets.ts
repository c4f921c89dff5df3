import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { FastifyRequest } from "fastify";
import { FlotillaError } from "../../errors.ts";
import type { HookContext, Hooks, ResourceHooks } from "../../odata/index.ts";

/**
 * Release assets (docs/releases.md "Release assets"): balena-sdk `release.asset.upload` posts a
 * file of up to 5 MiB as multipart/form-data to /v7/release_asset; the file is kept under
 * `$FLOTILLA_DATA_DIR/storage/release-assets/{id}` and read back through the row's `href`.
 */
export const RELEASE_ASSET_MAX_BYTES = 5 * 1024 * 1024;
const ASSET_URL = /^\/v7\/(?:release_asset|release__has__asset_key)(?:\((?:id=)?(\d+)\))?(?:\?.*)?$/;

/** The largest id an `integer` key column holds: a longer one names no row and is refused. */
const MAX_ID = 2_147_483_647;
const RESOURCE = "release__has__asset_key";

export type AssetFile = { bytes: Buffer; filename: string; content_type: string };
/** A file to store for an asset: its description and how to write it to a path (bytes or parts). */
export type AssetContent = {
  filename: string;
  content_type: string;
  size: number;
  writeTo(file: string): Promise<void>;
};

export const contentOf = (file: AssetFile): AssetContent => ({
  filename: file.filename,
  content_type: file.content_type,
  size: file.bytes.length,
  writeTo: (target) => fs.writeFile(target, file.bytes),
});

export const assetDirectory = (dataDir: string) => path.join(dataDir, "storage", "release-assets");
export const assetHref = (apiUrl: string, id: number) => `${apiUrl}/release-asset/v1/${id}/download`;

/** Is this a multipart write of a release asset? (Other multipart writes are refused.) */
export function isAssetUpload(request: FastifyRequest): boolean {
  return request.isMultipart() && ASSET_URL.test(request.url);
}

/** The fields of the multipart body as a data API body, and the file (`asset`) when one was sent. */
export async function readAssetUpload(
  request: FastifyRequest,
): Promise<{ body: Record<string, unknown>; file: AssetFile | undefined }> {
  const body: Record<string, unknown> = {};
  let file: AssetFile | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: RELEASE_ASSET_MAX_BYTES, files: 1, fields: 10 } })) {
      if (part.type === "file") {
        if (part.fieldname !== "asset") throw new FlotillaError("bad_request", `Unknown file field: ${part.fieldname}`);
        const bytes = await part.toBuffer();
        file = { bytes, filename: part.filename || "asset", content_type: part.mimetype || "application/octet-stream" };
        body.asset = { filename: file.filename, content_type: file.content_type, size: bytes.length };
      } else {
        const value = String(part.value);
        body[part.fieldname] = part.fieldname === "release" && /^\d+$/.test(value) ? Number(value) : value;
      }
    }
  } catch (error) {
    if (error instanceof FlotillaError) throw error;
    const code = (error as { code?: string }).code;
    if (code === "FST_REQ_FILE_TOO_LARGE") {
      throw new FlotillaError("payload_too_large", "A release asset sent in one request is at most 5 MiB");
    }
    throw new FlotillaError("bad_request", `The multipart body could not be read: ${(error as Error).message}`);
  }
  return { body, file };
}

/**
 * Where a multipart write may go: POST to the collection, or PATCH of one asset by its id (a file
 * is one asset's, never a `$filter`'s rows). Throws 400 for anything else.
 */
export function assetUploadTarget(method: string, url: string): { id: number | undefined } {
  const match = ASSET_URL.exec(url);
  const raw = match?.[1];
  if (method === "POST") {
    if (raw !== undefined) throw new FlotillaError("bad_request", "POST a release asset without an id");
    return { id: undefined };
  }
  if (raw === undefined)
    throw new FlotillaError("bad_request", "PATCH a release asset by its id, e.g. release_asset(1)");
  const id = Number(raw);
  if (raw.length > 10 || id < 1 || id > MAX_ID) throw new FlotillaError("bad_request", "invalid id passed in url");
  return { id };
}

/**
 * The data API hooks of one upload: the file is written inside the write's transaction, after
 * the engine matched the row and checked the caller's permission on it (so nobody writes another
 * tenant's file or one for an id that has no row), and it takes its final name only once the
 * write committed. `stored` collects the ids written; `discard` removes what a rolled-back
 * write left. Not one byte is written for a write that matched no row.
 */
export function assetUploadHooks(
  hooks: Hooks,
  { dataDir, apiUrl, file }: { dataDir: string; apiUrl: string; file: AssetContent },
) {
  const stored: number[] = [];
  const pending = new Set<string>();
  const directory = assetDirectory(dataDir);
  const store = async ({ tx, afterCommit }: HookContext, id: number) => {
    await fs.mkdir(directory, { recursive: true });
    const target = path.join(directory, String(id));
    const staging = `${target}.${crypto.randomBytes(6).toString("hex")}.tmp`;
    pending.add(staging);
    await file.writeTo(staging);
    const asset = {
      filename: file.filename,
      content_type: file.content_type,
      size: file.size,
      href: assetHref(apiUrl, id),
    };
    await tx.query(`UPDATE "release_asset" SET asset = $2 WHERE id = $1`, [id, JSON.stringify(asset)]);
    stored.push(id);
    afterCommit(async () => {
      await fs.rename(staging, target);
      pending.delete(staging);
    });
  };
  const own = hooks[RESOURCE];
  const withFile: ResourceHooks = {
    ...own,
    async afterCreate(args) {
      await own?.afterCreate?.(args);
      await store(args, args.id);
    },
    async afterUpdate(args) {
      await own?.afterUpdate?.(args);
      if (args.ids.length !== 1) throw new FlotillaError("bad_request", "A file belongs to one release asset");
      await store(args, args.ids[0] as number);
    },
  };
  return {
    hooks: { ...hooks, [RESOURCE]: withFile } as Hooks,
    stored,
    /** Removes the staged files still there; says how many (after a commit, a failed rename). */
    discard: async () => {
      const left = [...pending];
      await Promise.all(left.map((staging) => fs.rm(staging, { force: true })));
      return left.length;
    },
  };
}

/** The stored file of an asset (its path), when there is one. */
export async function assetFile(dataDir: string, id: number): Promise<string | undefined> {
  const file = path.join(assetDirectory(dataDir), String(id));
  return (await fs.stat(file).catch(() => undefined))?.isFile() ? file : undefined;
}

export const removeAssets = (dataDir: string, ids: number[]) =>
  Promise.all(ids.map((id) => fs.rm(path.join(assetDirectory(dataDir), String(id)), { force: true })));
