import { describe, expect, it } from "vitest";
import { createSseParser } from "./server-events.ts";

describe("the event stream reader", () => {
  it("reads events split anywhere across chunks, and skips keepalive comments", () => {
    const parser = createSseParser();
    const text = 'event: snapshot\ndata: {"id":1}\n\n: keepalive\n\nevent: output\ndata: {"data":"Linux\\n"}\n\n';
    const events = [...text].flatMap((char) => parser.feed(char));
    expect(events).toEqual([
      { event: "snapshot", data: { id: 1 } },
      { event: "output", data: { data: "Linux\n" } },
    ]);
  });

  it("keeps an unfinished event until its blank line, takes CRLF and multi-line data", () => {
    const parser = createSseParser();
    expect(parser.feed('event: state\r\ndata: {"a":\r\n')).toEqual([]);
    expect(parser.feed("data: 1}\r\n\r\nevent: summary\ndata: {}")).toEqual([{ event: "state", data: { a: 1 } }]);
    expect(parser.feed("\n\n")).toEqual([{ event: "summary", data: {} }]);
  });

  it("drops an event whose data is not JSON and goes on", () => {
    const parser = createSseParser();
    expect(parser.feed('data: nope\n\nevent: x\ndata: {"ok":true}\n\n')).toEqual([{ event: "x", data: { ok: true } }]);
  });
});
