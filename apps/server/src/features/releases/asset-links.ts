import crypto from "node:crypto";

/**
 * Pre-signed links of release assets, as balena's S3 links are: the path plus `expires` (unix
 * seconds) and an HMAC `signature` over both, so a client follows them without a token
 * (balena-sdk `release.asset.download` sends none) and only until they expire. Part uploads of a
 * multipart upload use the same signing for their PUT links.
 */
export const ASSET_LINK_TTL_SECONDS = 3600;

export type AssetLinks = ReturnType<typeof createAssetLinks>;

export function createAssetLinks(secret: Uint8Array, apiUrl: string) {
  // A key of its own, so a link signature is never valid as anything else signed with the secret.
  const key = crypto.createHmac("sha256", secret).update("flotilla release asset links").digest();
  const mac = (pathname: string, expires: number) =>
    crypto.createHmac("sha256", key).update(`${pathname}\n${expires}`).digest("base64url");

  return {
    /**
     * The API's link to `pathname` (`/release-asset/…`, any query dropped) signed until now + ttl.
     * The path is signed as the API routes it, whatever prefix the public API URL has.
     */
    sign(pathname: string, now = Date.now(), ttlSeconds = ASSET_LINK_TTL_SECONDS): string {
      const bare = pathname.split("?")[0] ?? "";
      const expires = Math.floor(now / 1000) + ttlSeconds;
      return `${apiUrl}${bare}?expires=${expires}&signature=${mac(bare, expires)}`;
    },
    /** "valid", "expired" or "invalid" for a request's path and its `expires`/`signature`. */
    check(pathname: string, query: { expires?: unknown; signature?: unknown }, now = Date.now()) {
      const expires = Number(query.expires);
      const signature = typeof query.signature === "string" ? query.signature : "";
      if (!Number.isSafeInteger(expires)) return "invalid" as const;
      const expected = Buffer.from(mac(pathname, expires));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return "invalid" as const;
      return expires * 1000 < now ? ("expired" as const) : ("valid" as const);
    },
  };
}

const HREF_PREFIX = "/release-asset/v1/";

/**
 * Signs every release asset link in a data API answer, however deep (`release_asset` rows, or
 * expanded under a release): the stored `href` is the unsigned link, signed fresh on each read.
 */
export function signAssetLinks(body: unknown, links: AssetLinks, apiUrl: string): void {
  const prefix = `${apiUrl}${HREF_PREFIX}`;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (value === null || typeof value !== "object") return;
    const record = value as Record<string, unknown>;
    const asset = record.asset as { href?: unknown } | null | undefined;
    if (asset && typeof asset === "object" && typeof asset.href === "string" && asset.href.startsWith(prefix)) {
      asset.href = links.sign(asset.href.slice(apiUrl.length));
    }
    for (const [key, child] of Object.entries(record)) if (key !== "asset" && typeof child === "object") visit(child);
  };
  visit(body);
}
