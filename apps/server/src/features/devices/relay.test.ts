import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { createLocalBus } from "./bus.ts";
import { createRelay } from "./relay.ts";

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
