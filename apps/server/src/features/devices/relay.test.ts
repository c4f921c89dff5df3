import { EventEmitter } from "node:events";
import { describe, expect, it, vi } from "vitest";
import type { WebSocket } from "ws";
import { type Bus, createLocalBus } from "./bus.ts";
import { createRelay, RELAY_TIMEOUT_MS } from "./relay.ts";

/** Just enough of a ws socket for the relay: open state, send, close. */
function fakeSocket() {
  const socket = Object.assign(new EventEmitter(), {
    OPEN: 1,
    readyState: 1,
    closedWith: undefined as number | undefined,
    sent: [] as string[],
    send(data: string, done?: (error?: Error) => void) {
      socket.sent.push(data);
      done?.();
    },
    close(code: number) {
      socket.closedWith = code;
      socket.readyState = 3;
    },
  });
  return socket;
}

describe("cloudlink relay", () => {
  it("keeps the socket whose upgrade arrived last, even when its lookup finished first", async () => {
    const relay = createRelay(createLocalBus());
    const older = fakeSocket();
    const newer = fakeSocket();
    relay.attach(7, newer as unknown as WebSocket, 2n);
    const late = relay.attach(7, older as unknown as WebSocket, 1n);
    expect(older.closedWith).toBe(4000);
    expect(newer.closedWith).toBeUndefined();
    expect(await late.detach()).toBe(false);
    void relay.request(7, "blink", {}).catch(() => undefined);
    expect(newer.sent).toHaveLength(1);
    expect(older.sent).toHaveLength(0);
  });

  it("replaces an older socket with a newer one and skips one the device already closed", () => {
    const relay = createRelay(createLocalBus());
    const first = fakeSocket();
    const second = fakeSocket();
    relay.attach(7, first as unknown as WebSocket, 1n);
    relay.attach(7, second as unknown as WebSocket, 2n);
    expect(first.closedWith).toBe(4000);
    const gone = fakeSocket();
    gone.readyState = 3;
    relay.attach(7, gone as unknown as WebSocket, 3n);
    expect(second.closedWith).toBeUndefined();
  });
});

/** A Redis bus of one instance among others: owner records in a map, `toInstance` heard by `alive` only. */
function fakeClusterBus(alive: Set<string>) {
  const records = new Map<string, string>();
  const handlers = new Map<string, ((payload: unknown, from: string) => void)[]>();
  const sent: { instance: string; topic: string; payload: unknown }[] = [];
  const bus = {
    instanceId: "a",
    prefix: "test:",
    redis: {
      get: async (key: string) => records.get(key) ?? null,
      set: async (key: string, value: string) => void records.set(key, value),
      del: async (key: string) => void records.delete(key),
      // DELETE_IF_OURS
      eval: async (_script: string, _keys: number, key: string, owner: string) => {
        const current = records.get(key);
        if (current !== undefined && current !== owner) return 0;
        records.delete(key);
        return 1;
      },
    },
    toAll: async () => undefined,
    toInstance: async (instance: string, topic: string, payload: unknown) => {
      sent.push({ instance, topic, payload });
      return alive.has(instance) ? 1 : 0;
    },
    on(topic: string, handler: (payload: unknown, from: string) => void) {
      handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
    },
    close: async () => undefined,
  };
  const emit = (topic: string, payload: unknown) => {
    for (const handler of handlers.get(topic) ?? []) handler(payload, "other");
  };
  return { bus: bus as unknown as Bus, records, sent, emit };
}

describe("cloudlink relay across instances", () => {
  it("sends a request for a device of a killed instance to the socket it opens here when it comes back", async () => {
    const { bus, records } = fakeClusterBus(new Set());
    records.set("test:cloudlink:7", "killed"); // kill -9 left the record; nobody hears its channel
    const relay = createRelay(bus);
    const started = Date.now();
    const answered = relay.request(7, "blink", {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    const socket = fakeSocket();
    relay.attach(7, socket as unknown as WebSocket, 1n);
    await vi.waitFor(() => expect(socket.sent).toHaveLength(1));
    const { id } = JSON.parse(socket.sent[0] ?? "{}") as { id: string };
    socket.emit("message", Buffer.from(JSON.stringify({ type: "response", id, status: 200, body: "OK" })), false);
    await expect(answered).resolves.toEqual({ status: 200, body: "OK" });
    expect(Date.now() - started).toBeLessThan(RELAY_TIMEOUT_MS);
  });

  it("sends it to the instance the device connected to instead", async () => {
    const { bus, records, sent, emit } = fakeClusterBus(new Set(["b"]));
    records.set("test:cloudlink:7", "killed");
    const relay = createRelay(bus);
    const answered = relay.request(7, "blink", {});
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    records.set("test:cloudlink:7", "b");
    emit("relay.attached", { deviceId: 7 });
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toMatchObject({ instance: "b", topic: "relay.request" });
    const { id } = (sent[1]?.payload ?? {}) as { id: string };
    emit("relay.answer", { id, answer: { status: 200, body: "OK" } });
    await expect(answered).resolves.toEqual({ status: 200, body: "OK" });
  });

  it("answers device_must_be_online when the device of a killed instance does not come back", async () => {
    const { bus, records } = fakeClusterBus(new Set());
    records.set("test:cloudlink:7", "killed");
    const relay = createRelay(bus);
    await expect(relay.request(7, "blink", {}, 30)).rejects.toMatchObject({ code: "device_must_be_online" });
  });

  it("leaves the owner record of a newer socket on another instance when the old one closes here", async () => {
    const { bus, records } = fakeClusterBus(new Set(["b"]));
    const relay = createRelay(bus);
    const link = relay.attach(7, fakeSocket() as unknown as WebSocket, 1n);
    await vi.waitFor(() => expect(records.get("test:cloudlink:7")).toBe("a"));
    records.set("test:cloudlink:7", "b"); // the device connected again, to instance b
    expect(await link.detach()).toBe(false);
    expect(records.get("test:cloudlink:7")).toBe("b");
    const again = relay.attach(7, fakeSocket() as unknown as WebSocket, 2n);
    await vi.waitFor(() => expect(records.get("test:cloudlink:7")).toBe("a"));
    expect(await again.detach()).toBe(true);
    expect(records.has("test:cloudlink:7")).toBe(false);
  });

  it("names the instance a device of a killed instance connected to for a terminal, not the dead one", async () => {
    const { bus, records } = fakeClusterBus(new Set());
    records.set("test:cloudlink:7", "killed");
    const relay = createRelay(bus);
    expect(await relay.ownerOf(7)).toBe("killed");
    const owner = relay.ownerOf(7, 1000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    relay.attach(7, fakeSocket() as unknown as WebSocket, 1n);
    await expect(owner).resolves.toBe("a");
    records.set("test:cloudlink:8", "killed");
    await expect(relay.ownerOf(8, 30)).resolves.toBeUndefined();
  });
});
