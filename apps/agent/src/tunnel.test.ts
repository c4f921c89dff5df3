import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectLocally, DeviceTunnels } from "./tunnel.ts";

type Frame = { type: string } & Record<string, unknown>;

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
};

describe("device tunnels", () => {
  const servers: net.Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });

  it("connects to the local port, carries bytes both ways and closes", async () => {
    const server = net.createServer((socket) => socket.on("data", (data) => socket.write(`echo:${data}`)));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const sent: Frame[] = [];
    const tunnels = new DeviceTunnels((frame) => sent.push(frame) > 0, connectLocally);
    tunnels.handle({ type: "tunnel-open", tunnel: "t1", port });
    await until(() => sent.some((f) => f.type === "tunnel-open"));
    tunnels.handle({ type: "tunnel-data", tunnel: "t1", data: Buffer.from("hi").toString("base64") });
    await until(() => sent.some((f) => f.type === "tunnel-data"));
    const data = sent.find((f) => f.type === "tunnel-data")?.data as string;
    expect(Buffer.from(data, "base64").toString()).toBe("echo:hi");
    tunnels.handle({ type: "tunnel-close", tunnel: "t1" });
    expect(tunnels.size).toBe(0);
  });

  it("tells why a tunnel cannot open: nothing listens, no tunnels here, not a port", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const sent: Frame[] = [];
    const tunnels = new DeviceTunnels((frame) => sent.push(frame) > 0, connectLocally);
    tunnels.handle({ type: "tunnel-open", tunnel: "a", port });
    await until(() => sent.length > 0);
    expect(sent[0]).toEqual({
      type: "tunnel-close",
      tunnel: "a",
      reason: "refused",
      message: `Device is not listening on port ${port}`,
    });
    tunnels.handle({ type: "tunnel-open", tunnel: "b", port: 70000 });
    expect(sent[1]).toMatchObject({ tunnel: "b", reason: "refused" });
    const simulated = new DeviceTunnels((frame) => sent.push(frame) > 0, undefined);
    simulated.handle({ type: "tunnel-open", tunnel: "c", port: 80 });
    expect(sent[2]).toMatchObject({ tunnel: "c", reason: "unsupported" });
  });
});
