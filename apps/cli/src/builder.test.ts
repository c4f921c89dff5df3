import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { build, buildUrl, readNdjson, summary, toBuildEvent } from "./builder.ts";

async function* chunks(...parts: (string | Uint8Array)[]) {
  for (const part of parts) yield typeof part === "string" ? new TextEncoder().encode(part) : part;
}

async function collect(source: AsyncIterable<unknown>) {
  const values: unknown[] = [];
  for await (const value of source) values.push(value);
  return values;
}

describe("readNdjson", () => {
  it("joins lines split across chunks, skips blank lines and takes a last line without a newline", async () => {
    const values = await collect(readNdjson(chunks('{"a":1}\n{"b"', ':2}\n\n  \n{"c":', "3}")));
    expect(values).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it("keeps a multi-byte character split between chunks whole", async () => {
    const bytes = new TextEncoder().encode('{"message":"héllo ✓"}\n');
    const cut = bytes.indexOf(0x9c); // inside the three bytes of ✓
    const values = await collect(readNdjson(chunks(bytes.subarray(0, cut), bytes.subarray(cut))));
    expect(values).toEqual([{ message: "héllo ✓" }]);
  });

  it("yields each line as soon as it is complete", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* slow() {
      yield new TextEncoder().encode('{"n":1}\n{"n":');
      await gate;
      yield new TextEncoder().encode("2}\n");
    }
    const iterator = readNdjson(slow());
    expect((await iterator.next()).value).toEqual({ n: 1 });
    release();
    expect((await iterator.next()).value).toEqual({ n: 2 });
    expect((await iterator.next()).done).toBe(true);
  });

  it("names a line that is not JSON, and refuses an endless line", async () => {
    await expect(collect(readNdjson(chunks('{"ok":true}\nnot json\n')))).rejects.toThrow(
      "The builder sent a line that is not JSON: not json",
    );
    await expect(collect(readNdjson(chunks("x".repeat(100), "y".repeat(100)), 150))).rejects.toThrow(/longer than 150/);
  });
});

describe("toBuildEvent", () => {
  it("reads the three kinds of line and passes over unknown ones", () => {
    expect(toBuildEvent({ type: "release", id: 12, commit: "abc" })).toEqual({
      type: "release",
      id: 12,
      commit: "abc",
    });
    expect(toBuildEvent({ type: "log", message: "[main] hi", service: "main" })).toEqual({
      type: "log",
      message: "[main] hi",
      service: "main",
    });
    expect(toBuildEvent({ type: "status", status: "success", id: 12, commit: "abc", raw_version: "1.0.0" })).toEqual({
      type: "status",
      status: "success",
      id: 12,
      commit: "abc",
      raw_version: "1.0.0",
    });
    expect(toBuildEvent({ type: "progress", percent: 3 })).toBeUndefined();
    expect(toBuildEvent({ type: "release", id: "12" })).toBeUndefined();
    expect(toBuildEvent(null)).toBeUndefined();
  });
});

describe("summary and buildUrl", () => {
  it("says the version, the short commit and the status", () => {
    expect(summary({ status: "success", version: "1.0.0", commit: "abc1234def567890", releaseId: 3 })).toBe(
      "Release 1.0.0 (abc1234) created: success",
    );
    expect(summary({ status: "failed", releaseId: 3 })).toBe("Release #3 created: failed");
  });

  it("addresses the fleet by id with the draft and note flags", () => {
    expect(buildUrl("http://api.test/", 7)).toBe("http://api.test/v3/build?app=7");
    expect(buildUrl("http://api.test", 7, { draft: true, note: "fix: ünïcode & more" })).toBe(
      "http://api.test/v3/build?app=7&draft=true&message=fix%3A+%C3%BCn%C3%AFcode+%26+more",
    );
  });
});

describe("build", () => {
  let server: http.Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
    server = undefined;
  });

  /** A stand-in builder answering with `handler`; the requests it saw are recorded. */
  async function builder(
    handler: (request: http.IncomingMessage, response: http.ServerResponse, body: Buffer) => void,
  ) {
    const seen: { url: string; headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
    server = http.createServer(async (request, response) => {
      const parts: Buffer[] = [];
      for await (const part of request) parts.push(part as Buffer);
      const body = Buffer.concat(parts);
      seen.push({ url: request.url ?? "", headers: request.headers, body });
      handler(request, response, body);
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
  }

  const request = (apiUrl: string, logs: string[], extra: Partial<Parameters<typeof build>[0]> = {}) => ({
    apiUrl,
    token: "secret-token",
    fleetId: 5,
    archive: Buffer.from("tar bytes"),
    onLog: (message: string) => logs.push(message),
    ...extra,
  });

  it("sends the archive with the token and prints the log lines as the build goes", async () => {
    const api = await builder((_request, response) => {
      response.writeHead(200, { "content-type": "application/x-ndjson" });
      response.write('{"type":"release","id":12,"commit":"0123456789abcdef0123456789abcdef"}\n');
      response.write('{"type":"log","message":"[main] Using prebuilt image nginx:1.27","service":"main"}\n');
      response.end(
        '{"type":"status","status":"success","id":12,"commit":"0123456789abcdef0123456789abcdef","raw_version":"1.0.0"}\n',
      );
    });
    const logs: string[] = [];
    const releases: number[] = [];
    const result = await build(
      request(api.url, logs, { draft: true, note: "hello", onRelease: ({ id }) => releases.push(id) }),
    );
    expect(result).toEqual({
      status: "success",
      releaseId: 12,
      commit: "0123456789abcdef0123456789abcdef",
      version: "1.0.0",
    });
    expect(logs).toEqual(["[main] Using prebuilt image nginx:1.27"]);
    expect(releases).toEqual([12]);
    expect(api.seen[0]?.url).toBe("/v3/build?app=5&draft=true&message=hello");
    expect(api.seen[0]?.headers.authorization).toBe("Bearer secret-token");
    expect(api.seen[0]?.headers["content-type"]).toBe("application/x-tar");
    expect(api.seen[0]?.body.toString()).toBe("tar bytes");
  });

  it("answers the failed status of a bad project", async () => {
    const api = await builder((_request, response) => {
      response.writeHead(200, { "content-type": "application/x-ndjson" });
      response.end(
        '{"type":"release","id":3,"commit":"ab"}\n{"type":"log","message":"Could not parse docker-compose.yml"}\n{"type":"status","status":"failed","id":3}\n',
      );
    });
    const logs: string[] = [];
    expect((await build(request(api.url, logs))).status).toBe("failed");
    expect(logs).toEqual(["Could not parse docker-compose.yml"]);
  });

  it("carries the server's message of a refusal, and says when the stream stops without a result", async () => {
    const api = await builder((request, response) => {
      if (request.url?.includes("app=5")) {
        response.writeHead(404, { "content-type": "application/json", "x-flotilla-error-code": "not_found" });
        response.end(JSON.stringify({ error: "not_found", message: "Fleet not found: 5" }));
      } else {
        response.writeHead(200, { "content-type": "application/x-ndjson" });
        response.end('{"type":"log","message":"half way"}\n');
      }
    });
    await expect(build(request(api.url, []))).rejects.toThrow("Fleet not found: 5 (HTTP 404)");
    await expect(build(request(api.url, [], { fleetId: 6 }))).rejects.toThrow(/ended without a result/);
  });

  it("asks to log in again on 401", async () => {
    const api = await builder((_request, response) => {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "unauthorized", message: "Unauthorized" }));
    });
    await expect(build(request(api.url, []))).rejects.toThrow(
      "Not logged in, or the session expired: run flotilla login",
    );
  });

  it("closes the request when aborted, which the server sees as the client going away", async () => {
    let closed: () => void = () => {};
    const serverSawClose = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const api = await builder((_request, response) => {
      response.writeHead(200, { "content-type": "application/x-ndjson" });
      response.write('{"type":"release","id":1,"commit":"ab"}\n');
      response.on("close", () => closed());
    });
    const controller = new AbortController();
    const logs: string[] = [];
    const running = build(request(api.url, logs, { signal: controller.signal, onRelease: () => controller.abort() }));
    await expect(running).rejects.toThrow();
    await serverSawClose;
  });
});
