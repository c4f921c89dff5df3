import crypto from "node:crypto";
import net from "node:net";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Release assets as balena-sdk handles them (issue #22, docs/releases.md "Release assets"):
 * upload in one request or in parts, pre-signed download links, list, get, remove.
 */
let t: TestApp;
let sdk: BalenaSDK;
let token: string;
let observerToken: string;
let release: number;
let front: net.Server;
const realFetch = globalThis.fetch;

// Links name the public API URL: a TCP relay on its port stands for the proxy in front of the API.
const streamText = async (stream: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
};

beforeAll(async () => {
  front = net.createServer();
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  const port = (front.address() as net.AddressInfo).port;
  t = await createTestApp({ FLOTILLA_API_URL: `http://127.0.0.1:${port}` });
  const target = Number(new URL(t.url).port);
  front.on("connection", (socket) => {
    const upstream = net.connect(target, "127.0.0.1");
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  const me = await t.factories.user({ email: "assets@example.com", password: "assets-password" });
  token = me.token;
  const org = await t.factories.organization({ name: "AssetCo", admins: [me.user] });
  const fleet = await t.factories.fleet(org, { name: "assetfleet" });
  release = (await t.factories.release(fleet)).id;
  const observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, fleet, "observer");
  observerToken = observer.token;
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "assets@example.com", password: "assets-password" });
});
afterAll(async () => {
  await t?.close();
  front?.close();
});

describe("release assets through balena-sdk", () => {
  it("uploads a small file in one request; its href is pre-signed, works without a token, and expires", async () => {
    const file = new File(["small bytes"], "notes.txt", { type: "text/plain" });
    const asset = await sdk.models.release.asset.upload({ asset: file, asset_key: "notes.txt", release });
    const href = (asset.asset as { href: string }).href;
    expect(href).toMatch(
      new RegExp(`^${t.config.apiUrl}/release-asset/v1/${asset.id}/download\\?expires=\\d+&signature=[\\w-]+$`),
    );
    // balena-sdk downloads without sending a token.
    const downloaded = await sdk.models.release.asset.download(asset.id);
    expect((await streamText(downloaded as unknown as NodeJS.ReadableStream)).toString()).toBe("small bytes");
    const plain = await realFetch(href);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toContain("text/plain");

    const url = new URL(href);
    const tampered = new URL(url);
    tampered.pathname = `/release-asset/v1/${asset.id + 1}/download`;
    const refused = await realFetch(tampered);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("not valid");
    const later = new URL(url);
    later.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 60));
    expect((await realFetch(later)).status).toBe(403);
    // Unsigned, the link needs a bearer who may read the asset.
    const bare = `${url.origin}${url.pathname}`;
    expect((await realFetch(bare)).status).toBe(401);
    expect((await realFetch(bare, { headers: { authorization: `Bearer ${observerToken}` } })).status).toBe(200);

    // An expired link: signed an hour and a bit ago.
    const { createAssetLinks } = await import("../src/features/releases/asset-links.ts");
    const { loadSecret } = await import("../src/lib/secret.ts");
    const links = createAssetLinks(loadSecret(t.config), t.config.apiUrl);
    const old = links.sign(url.pathname, Date.now() - 2 * 3600_000);
    const expired = await realFetch(old);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain("expired");
    // With a bearer who may read the asset, a stale link still works (the dashboard sends one).
    const withBearer = await realFetch(old, { headers: { authorization: `Bearer ${observerToken}` } });
    expect(withBearer.status).toBe(200);
    expect((await realFetch(links.sign(url.pathname))).status).toBe(200);
  });

  it("uploads a large file in parts (beginUpload, signed part PUTs, commitUpload), lists, gets and removes it", async () => {
    const bytes = crypto.randomBytes(11 * 1024 * 1024 + 123);
    const progress: number[] = [];
    const asset = await sdk.models.release.asset.upload(
      {
        asset: new File([bytes], "image.bin", { type: "application/octet-stream" }),
        asset_key: "big/image.bin",
        release,
      },
      { onUploadProgress: ({ uploaded }) => void progress.push(uploaded) },
    );
    expect(asset.asset).toMatchObject({
      filename: "image.bin",
      size: bytes.length,
      content_type: "application/octet-stream",
    });
    expect(progress.at(-1)).toBe(bytes.length);
    const back = await streamText(
      (await sdk.models.release.asset.download(asset.id)) as unknown as NodeJS.ReadableStream,
    );
    expect(back.equals(bytes)).toBe(true);

    // A second upload to the same key is refused unless overwrite is asked for.
    const again = new File([bytes.subarray(0, 6 * 1024 * 1024)], "image-2.bin");
    await expect(
      sdk.models.release.asset.upload({ asset: again, asset_key: "big/image.bin", release }),
    ).rejects.toThrow(/already exists/);
    await sdk.models.release.asset.upload({ asset: again, asset_key: "big/image.bin", release }, { overwrite: true });
    const got = await sdk.models.release.asset.get({ release, asset_key: "big/image.bin" });
    expect(got.asset).toMatchObject({ filename: "image-2.bin", size: 6 * 1024 * 1024 });

    const all = await sdk.models.release.asset.getAllByRelease(release);
    expect(all.map((a) => a.asset_key)).toEqual(["notes.txt", "big/image.bin"]);
    for (const each of all) expect((each.asset as { href: string }).href).toContain("signature=");

    const href = (got.asset as { href: string }).href;
    await sdk.models.release.asset.remove({ release, asset_key: "big/image.bin" });
    expect((await realFetch(href)).status).toBe(404);
    expect((await sdk.models.release.asset.getAllByRelease(release)).map((a) => a.asset_key)).toEqual(["notes.txt"]);
  });

  it("refuses bad multipart actions with clear errors, and observers", async () => {
    const asset = await sdk.models.release.asset.upload({
      asset: new File(["x"], "x.txt"),
      asset_key: "x.txt",
      release,
    });
    const post = (action: string, body: unknown, bearer = token) =>
      realFetch(`${t.url}/v7/release_asset(${asset.id})/${action}`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const begin = {
      asset: { filename: "a.bin", content_type: "application/octet-stream", size: 10, chunk_size: 5 * 1024 * 1024 },
    };
    expect((await post("beginUpload", begin, observerToken)).status).toBe(401);
    const small = await post("beginUpload", { asset: { ...begin.asset, chunk_size: 10 } });
    expect(small.status).toBe(400);
    expect(await small.text()).toContain("chunk_size");
    expect((await post("frobnicate", {})).status).toBe(400);
    const started = (await (await post("beginUpload", begin)).json()) as {
      asset: { uuid: string; uploadParts: { url: string; chunkSize: number; partNumber: number }[] };
    };
    expect(started.asset.uploadParts).toEqual([
      { url: expect.stringContaining("signature="), chunkSize: 10, partNumber: 1 },
    ]);
    // Too many bytes for the part, then a commit naming a part never sent.
    const part = started.asset.uploadParts[0]?.url ?? "";
    expect((await realFetch(part, { method: "PUT", body: new Uint8Array(11) })).status).toBe(413);
    const early = await post("commitUpload", {
      uuid: started.asset.uuid,
      providerCommitData: { Parts: [{ PartNumber: 1, ETag: "x" }] },
    });
    expect(early.status).toBe(400);
    expect(await early.text()).toContain("Part 1 was not uploaded");
    const put = await realFetch(part, { method: "PUT", body: new Uint8Array(10) });
    expect(put.status).toBe(200);
    const etag = put.headers.get("etag") ?? "";
    const forged = new URL(part);
    forged.searchParams.set("signature", "x");
    expect((await realFetch(forged, { method: "PUT", body: new Uint8Array(10) })).status).toBe(403);
    expect((await post("commitUpload", { uuid: crypto.randomUUID(), providerCommitData: { Parts: [] } })).status).toBe(
      400,
    );
    const committed = await post("commitUpload", {
      uuid: started.asset.uuid,
      providerCommitData: { Parts: [{ PartNumber: 1, ETag: etag }] },
    });
    expect(committed.status).toBe(200);
    expect(await committed.json()).toMatchObject({ filename: "a.bin", size: 10 });
    // The upload is gone once committed.
    expect(
      (
        await post("commitUpload", {
          uuid: started.asset.uuid,
          providerCommitData: { Parts: [{ PartNumber: 1, ETag: etag }] },
        })
      ).status,
    ).toBe(404);
  });
});
