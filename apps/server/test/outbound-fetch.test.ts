import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fetchAllowList,
  isPermittedAddress,
  OutboundFetchError,
  outboundFetch,
  readBody,
} from "../src/lib/outbound-fetch.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Server-side request forgery (DESIGN §12). An internal service listens on 127.0.0.1 and must
 * receive NOTHING from any attempt below. A code host the operator allows
 * (FLOTILLA_FETCH_ALLOW=127.0.0.2, another loopback address) serves keys, archives, redirects
 * back to the internal service, a 404 and an HTML page; a port next to it is closed.
 */
const ALLOWED_HOST = "127.0.0.2";
const allow = fetchAllowList([ALLOWED_HOST]);

let internalHits = 0;
const internal = http.createServer((_request, response) => response.end("secret"));
internal.on("connection", () => {
  internalHits += 1;
});
let internalPort = 0;

const ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGv2c0Q3J6sT0mX8yQ3cK1r9hZQb6mKQ3n9gVt7nVq1k";
const codeHost = http.createServer((request, response) => {
  const path = request.url ?? "";
  const redirect = (location: string) => response.writeHead(302, { location }).end();
  if (path === "/ok.keys") return response.writeHead(200, { "content-type": "text/plain" }).end(`${ED} ok\n`);
  if (path === "/html.keys") return response.writeHead(200, { "content-type": "text/html" }).end(`${ED}\n`);
  if (path === "/to-internal") return redirect(`http://127.0.0.1:${internalPort}/`);
  if (path === "/to-internal-hex") return redirect(`http://0x7f000001:${internalPort}/`);
  if (path === "/to-internal-mapped") return redirect(`http://[::ffff:127.0.0.1]:${internalPort}/`);
  const hop = /^\/hop\/(\d+)$/.exec(path);
  if (hop) {
    const left = Number(hop[1]);
    return left === 0 ? response.end("arrived") : redirect(`/hop/${left - 1}`);
  }
  response.writeHead(404, { "content-type": "text/plain" }).end("not found");
});
let hostUrl = "";
let closedUrl = "";

const listen = (server: http.Server, host: string) =>
  new Promise<number>((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));

beforeAll(async () => {
  internalPort = await listen(internal, "127.0.0.1");
  hostUrl = `http://${ALLOWED_HOST}:${await listen(codeHost, ALLOWED_HOST)}`;
  // A port that was open a moment ago and is closed now.
  const closed = http.createServer();
  const closedPort = await listen(closed, ALLOWED_HOST);
  await new Promise((resolve) => closed.close(resolve));
  closedUrl = `http://${ALLOWED_HOST}:${closedPort}/ok.keys`;
});
afterAll(async () => {
  internal.closeAllConnections();
  codeHost.closeAllConnections();
  await new Promise((resolve) => internal.close(resolve));
  await new Promise((resolve) => codeHost.close(resolve));
});

const options = { allow, timeoutMs: 5000, maxBytes: 1024 };

describe("isPermittedAddress", () => {
  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "240.0.0.1",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "64:ff9b::7f00:1",
    "2002:7f00:1::",
    "not an address",
  ])("refuses %s", (address) => {
    expect(isPermittedAddress(address, "example.com", fetchAllowList([]))).toBe(false);
  });

  it.each(["8.8.8.8", "140.82.112.3", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("lets %s through", (address) => {
    expect(isPermittedAddress(address, "example.com", fetchAllowList([]))).toBe(true);
  });

  it("lets the operator allow hosts by name and addresses by range", () => {
    const list = fetchAllowList(["git.internal", "10.1.0.0/16", "fd00::/8", "127.0.0.2"]);
    expect(isPermittedAddress("10.9.9.9", "Git.Internal.", list)).toBe(true);
    expect(isPermittedAddress("10.1.200.3", "x.example", list)).toBe(true);
    expect(isPermittedAddress("::ffff:10.1.0.1", "x.example", list)).toBe(true);
    expect(isPermittedAddress("fd00::5", "x.example", list)).toBe(true);
    expect(isPermittedAddress("127.0.0.2", "x.example", list)).toBe(true);
    expect(isPermittedAddress("10.2.0.1", "x.example", list)).toBe(false);
    expect(isPermittedAddress("127.0.0.1", "x.example", list)).toBe(false);
  });
});

describe("outboundFetch", () => {
  it("fetches from an allowed host, and follows up to 3 redirects there", async () => {
    const response = await outboundFetch(`${hostUrl}/ok.keys`, options);
    expect(response.status).toBe(200);
    expect((await readBody(response)).toString()).toBe(`${ED} ok\n`);
    expect((await readBody(await outboundFetch(`${hostUrl}/hop/3`, options))).toString()).toBe("arrived");
    await expect(outboundFetch(`${hostUrl}/hop/4`, options)).rejects.toBeInstanceOf(OutboundFetchError);
  });

  it("bounds the body", async () => {
    const response = await outboundFetch(`${hostUrl}/ok.keys`, { ...options, maxBytes: 10 });
    await expect(readBody(response)).rejects.toBeInstanceOf(OutboundFetchError);
  });

  it("trusts an operator-configured origin as configured, but not where it redirects", async () => {
    const internalOrigin = `http://127.0.0.1:${internalPort}`;
    const before = internalHits;
    const trusted = { ...options, allow: fetchAllowList([]), trustedOrigins: [hostUrl] };
    expect((await outboundFetch(`${hostUrl}/ok.keys`, trusted)).status).toBe(200);
    await expect(outboundFetch(`${hostUrl}/to-internal`, trusted)).rejects.toBeInstanceOf(OutboundFetchError);
    expect(internalHits - before).toBe(0);
    // The internal service itself, once trusted, is reached: the test's listener does count.
    const reached = await outboundFetch(`${internalOrigin}/`, { ...trusted, trustedOrigins: [internalOrigin] });
    expect((await readBody(reached)).toString()).toBe("secret");
    expect(internalHits - before).toBe(1);
  });

  it("never connects to the internal service, however its address is written or reached", async () => {
    const before = internalHits;
    const attempts = [
      `http://127.0.0.1:${internalPort}/`,
      `http://0x7f000001:${internalPort}/`,
      `http://2130706433:${internalPort}/`,
      `http://0177.0.0.1:${internalPort}/`,
      `http://127.1:${internalPort}/`,
      `http://[::ffff:127.0.0.1]:${internalPort}/`,
      `http://[::ffff:7f00:1]:${internalPort}/`,
      `http://localhost:${internalPort}/`,
      `http://localhost.:${internalPort}/`,
      `https://127.0.0.1:${internalPort}/`,
      `${hostUrl}/to-internal`,
      `${hostUrl}/to-internal-hex`,
      `${hostUrl}/to-internal-mapped`,
      "http://169.254.169.254/latest/meta-data/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      `file:///etc/passwd`,
      `ftp://127.0.0.1:${internalPort}/`,
      `http://user:pass@${ALLOWED_HOST}/`,
    ];
    for (const url of attempts) {
      const error = await outboundFetch(url, options).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, url).toBeInstanceOf(OutboundFetchError);
      // One text for every failure; the detail is for the log.
      expect((error as Error).message, url).toBe("The URL could not be fetched.");
    }
    expect(internalHits - before).toBe(0);
  });
});

describe("user URLs through the routes", () => {
  let t: TestApp;
  let token: string;
  let fleetId: number;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${t.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    t = await createTestApp({ FLOTILLA_FETCH_ALLOW: ALLOWED_HOST });
    const me = await t.factories.user();
    token = me.token;
    const org = await t.factories.organization({ admins: [me.user] });
    fleetId = (await t.factories.fleet(org)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("imports SSH keys from an allowed host, and answers every failure with one text", async () => {
    const before = internalHits;
    expect(await post("/user/v1/ssh-keys/import", { url: `${hostUrl}/ok.keys` })).toEqual({
      status: 200,
      body: { added: 1, skipped: 0, invalid: 0 },
    });
    const failures = [
      `http://127.0.0.1:${internalPort}/keys`,
      `http://0x7f000001:${internalPort}/keys`,
      `http://[::ffff:127.0.0.1]:${internalPort}/keys`,
      `${hostUrl}/to-internal`,
      `${hostUrl}/missing.keys`,
      `${hostUrl}/html.keys`,
      closedUrl,
      "http://169.254.169.254/latest/meta-data/",
    ];
    for (const url of failures) {
      const answer = await post("/user/v1/ssh-keys/import", { url });
      expect([url, answer.status, answer.body.message]).toEqual([
        url,
        400,
        "The key list could not be fetched from this URL.",
      ]);
    }
    expect(internalHits - before).toBe(0);
  });

  it("downloads nothing from internal addresses for a build from URL, with one text for every failure", async () => {
    const before = internalHits;
    for (const url of [
      `http://127.0.0.1:${internalPort}/a.tar.gz`,
      `http://2130706433:${internalPort}/a.tar.gz`,
      `${hostUrl}/to-internal-hex`,
      `${hostUrl}/missing.tar.gz`,
      closedUrl,
    ]) {
      const answer = await post(`/v3/buildFromUrl?app=${fleetId}`, { url });
      expect([url, answer.status, answer.body]).toEqual([
        url,
        200,
        { started: false, message: "Could not download the project from this URL." },
      ]);
    }
    expect(internalHits - before).toBe(0);
  });
});
