import { describe, expect, it } from "vitest";
import { type SocketLike, TerminalConnection, type TerminalStatus } from "./connection.ts";

/** A websocket the test drives: it opens, answers and closes when told. */
class FakeSocket implements SocketLike {
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: (() => void) | null = null;
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  message(message: unknown) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  drop() {
    this.readyState = 3;
    this.onclose?.();
  }
}

function setup() {
  const sockets: FakeSocket[] = [];
  const timers: Array<{ run: () => void; ms: number }> = [];
  const statuses: TerminalStatus[] = [];
  const output: string[] = [];
  const connection = new TerminalConnection({
    url: "ws://api/terminal/v1/connect",
    token: async () => "jwt",
    uuid: "abc",
    target: "host",
    size: () => ({ cols: 100, rows: 30 }),
    onData: (data) => output.push(data),
    onStatus: (status) => statuses.push(status),
    socket: () => {
      const socket = new FakeSocket();
      sockets.push(socket);
      return socket;
    },
    setTimeout: (run, ms) => {
      timers.push({ run, ms });
      return timers.length;
    },
    clearTimeout: () => {},
  });
  const last = () => sockets.at(-1) as FakeSocket;
  /** Opens the newest socket and lets the token promise settle. */
  const opened = async () => {
    last().open();
    await Promise.resolve();
    await Promise.resolve();
  };
  /** Runs the pending timer (a retry). */
  const tick = () => timers.shift()?.run();
  return { connection, sockets, timers, statuses, output, last, opened, tick };
}

describe("terminal connection", () => {
  it("authenticates with its first message, connects on ssh connect, relays data and resize", async () => {
    const s = setup();
    s.connection.connect();
    expect(s.connection.status.state).toBe("connecting");
    await s.opened();
    expect(s.last().sent[0]).toEqual({
      event: "authentication",
      token: "jwt",
      uuid: "abc",
      target: "host",
      cols: 100,
      rows: 30,
    });
    s.last().message({ event: "ssh connect" });
    expect(s.connection.status).toEqual({ state: "connected" });
    s.last().message({ event: "data", data: "hello" });
    expect(s.output).toEqual(["hello"]);
    s.connection.send("ls\r");
    s.connection.resize(120, 40);
    expect(s.last().sent.slice(-2)).toEqual([
      { event: "data", data: "ls\r" },
      { event: "resize", cols: 120, rows: 40 },
    ]);
  });

  it("retries an ssh disconnect 5 times, 2 s apart, then fails with errors.reconnect_failed", async () => {
    const s = setup();
    s.connection.connect();
    await s.opened();
    s.last().message({ event: "ssh connect" });
    s.last().message({ event: "error", reason: "ssh_disconnected" });
    s.last().drop();
    expect(s.connection.status).toEqual({
      state: "connecting",
      message: "errors.ssh_session_disconnected",
      attempt: 1,
    });
    for (let attempt = 2; attempt <= 5; attempt++) {
      expect(s.timers.map((t) => t.ms)).toEqual([2000]);
      s.tick();
      await s.opened();
      s.last().drop();
      expect(s.connection.status).toMatchObject({ state: "connecting", message: "errors.disconnected", attempt });
    }
    s.tick();
    await s.opened();
    s.last().drop();
    expect(s.connection.status).toEqual({ state: "failed", message: "errors.reconnect_failed" });
    expect(s.timers).toEqual([]);
    expect(s.sockets).toHaveLength(6);
  });

  it("a successful reconnect starts the count again", async () => {
    const s = setup();
    s.connection.connect();
    await s.opened();
    s.last().drop();
    s.tick();
    await s.opened();
    s.last().message({ event: "ssh connect" });
    s.last().drop();
    expect(s.connection.status).toMatchObject({ attempt: 1 });
  });

  it("fails at once on an unauthorized reply", async () => {
    const s = setup();
    s.connection.connect();
    await s.opened();
    s.last().message({ event: "error", reason: "unauthorized", message: "Unauthorized." });
    s.last().drop();
    expect(s.connection.status).toEqual({ state: "failed", message: "devices.terminal.unauthorized" });
    expect(s.timers).toEqual([]);
  });

  it("retries every second, without limit, while the device is offline", async () => {
    const s = setup();
    s.connection.connect();
    for (let i = 0; i < 8; i++) {
      await s.opened();
      s.last().message({ event: "error", reason: "device_offline" });
      s.last().drop();
      expect(s.connection.status).toEqual({ state: "connecting", message: "devices.terminal.device_offline" });
      expect(s.timers.map((t) => t.ms)).toEqual([1000]);
      s.tick();
    }
    await s.opened();
    s.last().message({ event: "ssh connect" });
    expect(s.connection.status.state).toBe("connected");
  });

  it("rebinds with a fresh session, and close ends it for good", async () => {
    const s = setup();
    s.connection.connect();
    await s.opened();
    s.last().message({ event: "ssh connect" });
    const first = s.last();
    s.connection.rebind();
    expect(first.readyState).toBe(3);
    expect(s.sockets).toHaveLength(2);
    expect(s.connection.status.state).toBe("connecting");
    s.connection.close();
    expect(s.last().readyState).toBe(3);
    expect(s.timers).toEqual([]);
  });
});
