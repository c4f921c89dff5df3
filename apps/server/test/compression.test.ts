import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import zlib from "node:zlib";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDashboard } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Compressed delivery (docs/operations.md "Compression"): API answers above 1 KB in brotli or
 * gzip when accepted, byte-identical once decoded; small answers as they are (streams: see
 * device-logs.test.ts); the dashboard's assets from the build's own .br/.gz copies.
 */

/** A raw GET (fetch would decode): status, headers and the body as sent. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        );
      })
      .on("error", reject);
  });
}

const decode = (encoding: string | undefined, body: Buffer) =>
  encoding === "br" ? zlib.brotliDecompressSync(body) : encoding === "gzip" ? zlib.gunzipSync(body) : body;

let t: TestApp;
let owner: { token: string };

beforeAll(async () => {
  t = await createTestApp();
  owner = await t.factories.user();
});
afterAll(() => t.close());

describe("API answers", () => {
  it("are compressed above 1 KB when the client accepts brotli or gzip, and decode to the same bytes", async () => {
    const url = `${t.url}/v7/device_type?$select=slug,name`;
    const auth = { authorization: `Bearer ${owner.token}` };
    const plain = await rawGet(url, auth);
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    for (const [accept, encoding] of [
      ["br, gzip", "br"],
      ["gzip", "gzip"],
    ] as const) {
      const packed = await rawGet(url, { ...auth, "accept-encoding": accept });
      expect(packed.headers["content-encoding"]).toBe(encoding);
      expect(packed.headers.vary).toMatch(/accept-encoding/i);
      expect(packed.body.length).toBeLessThan(plain.body.length / 2);
      expect(decode(encoding, packed.body).equals(plain.body)).toBe(true);
    }
  });

  it("leave small answers as they are", async () => {
    const small = await rawGet(`${t.url}/ping`, { "accept-encoding": "br, gzip" });
    expect(small.status).toBe(200);
    expect(small.headers["content-encoding"]).toBeUndefined();
  });
});

describe("dashboard assets", () => {
  const dist = fs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/flotilla-dist-`);
  const script = `export const text = ${JSON.stringify("fleet ".repeat(500))};\n`;
  let server: Awaited<ReturnType<typeof buildDashboard>>;
  let base: string;
  beforeAll(async () => {
    fs.mkdirSync(path.join(dist, "assets"));
    fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>Flotilla</title>");
    const file = path.join(dist, "assets", "app-1234.js");
    fs.writeFileSync(file, script);
    // What the build writes beside each asset (vite-plugin-compression2).
    fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(script));
    fs.writeFileSync(`${file}.gz`, zlib.gzipSync(script));
    const config = loadConfig({ FLOTILLA_DATA_DIR: dist, FLOTILLA_WEB_DIST: dist, LOG_LEVEL: "silent" });
    server = await buildDashboard(config, pino({ level: "silent" }));
    await server.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it("are sent from the build's brotli or gzip copy, as the browser accepts, with immutable caching", async () => {
    for (const [accept, encoding] of [
      ["gzip, deflate, br", "br"],
      ["gzip", "gzip"],
      ["", undefined],
    ] as const) {
      const response = await rawGet(`${base}/assets/app-1234.js`, accept ? { "accept-encoding": accept } : {});
      expect(response.status, accept).toBe(200);
      expect(response.headers["content-encoding"]).toBe(encoding);
      expect(response.headers["content-type"]).toMatch(/javascript/);
      expect(response.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect(decode(encoding, response.body).toString()).toBe(script);
      if (encoding) expect(response.headers.vary).toMatch(/accept-encoding/i);
    }
  });

  it("carry only the headers a script obeys; the page keeps its policy", async () => {
    const asset = await rawGet(`${base}/assets/app-1234.js`, { "accept-encoding": "br" });
    expect(asset.headers["x-content-type-options"]).toBe("nosniff");
    for (const name of ["content-security-policy", "strict-transport-security", "x-frame-options", "last-modified"]) {
      expect(asset.headers[name], name).toBeUndefined();
    }
    const page = await rawGet(`${base}/fleets`, {});
    expect(page.headers["content-security-policy"]).toMatch(/default-src 'self'/);
    expect(page.headers["x-frame-options"]).toBe("SAMEORIGIN");
    expect(page.headers.etag).toBeDefined();
  });
});
