import type { AddressInfo } from "node:net";
import { CLOUDLINK_ATTEMPT_HEADER, parseCloudlinkAttempt } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { CloudlinkClient, ok } from "../src/protocol/cloudlink.ts";

/** Each connect names itself `<run>.<n>`, so the server can tell a stale handshake from the live one. */
describe("cloudlink connect attempts", () => {
  it("are numbered 1, 2, … within one client's run, and each client has its own run", async () => {
    const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    const seen: string[] = [];
    server.on("connection", (socket, request) => {
      seen.push(String(request.headers[CLOUDLINK_ATTEMPT_HEADER]));
      // Dropped at once: the client connects again after its backoff.
      if (seen.length < 3) socket.close();
    });
    await new Promise((resolve) => server.once("listening", resolve));
    const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const options = { apiUrl, deviceKey: "k".repeat(32), handler: () => ok(), random: () => 0 };
    const first = new CloudlinkClient(options);
    first.start();
    try {
      while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
      const attempts = seen.map(parseCloudlinkAttempt);
      expect(attempts.map((attempt) => attempt?.n)).toEqual([1, 2, 3]);
      expect(new Set(attempts.map((attempt) => attempt?.run)).size).toBe(1);
      first.stop();
      const second = new CloudlinkClient(options);
      second.start();
      while (seen.length < 4) await new Promise((resolve) => setTimeout(resolve, 20));
      second.stop();
      const restarted = parseCloudlinkAttempt(seen[3]);
      expect(restarted?.n).toBe(1);
      expect(restarted?.run).not.toBe(attempts[0]?.run);
    } finally {
      first.stop();
      server.close();
    }
  });
});
