// The reference of bench/device-path.ts: a bare node:http JSON endpoint in its own process, no
// framework, no authentication, no database. It reads the request body (if any) and answers a
// small JSON document. Prints `listening <port>` on stdout once ready.
import http from "node:http";
import type { AddressInfo } from "node:net";

const server = http.createServer((request, response) => {
  let size = 0;
  request.on("data", (chunk: Buffer) => {
    size += chunk.length;
  });
  request.on("end", () => {
    const body = JSON.stringify({ ok: true, method: request.method, received: size });
    response.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": body.length });
    response.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
