import fs from "node:fs/promises";
import path from "node:path";
import type { FastifyRequest } from "fastify";
import { FlotillaError } from "../../errors.ts";

/**
 * Release assets (docs/releases.md "Release assets"): balena-sdk `release.asset.upload` posts a
 * file of up to 5 MiB as multipart/form-data to /v7/release_asset; the file is kept under
 * `$FLOTILLA_DATA_DIR/storage/release-assets/{id}` and read back through the row's `href`.
 */
export const RELEASE_ASSET_MAX_BYTES = 5 * 1024 * 1024;
const ASSET_URL = /^\/v7\/(?:release_asset|release__has__asset_key)(?:\((?:id=)?(\d+)\))?(?:\?.*)?$/;

export type AssetFile = { bytes: Buffer; filename: string; content_type: string };

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

export async function storeAsset(dataDir: string, id: number, file: AssetFile) {
  const directory = assetDirectory(dataDir);
  await fs.mkdir(directory, { recursive: true });
  const target = path.join(directory, String(id));
  await fs.writeFile(`${target}.tmp`, file.bytes);
  await fs.rename(`${target}.tmp`, target);
}

export const readAsset = (dataDir: string, id: number) =>
  fs.readFile(path.join(assetDirectory(dataDir), String(id))).catch(() => undefined);

export const removeAssets = (dataDir: string, ids: number[]) =>
  Promise.all(ids.map((id) => fs.rm(path.join(assetDirectory(dataDir), String(id)), { force: true })));
