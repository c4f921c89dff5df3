/**
 * A reader of a `text/event-stream` body (the bulk-command stream, docs/bulk-commands.md) for the
 * dashboard, the CLI and the benchmark, which cannot use EventSource (it sends no bearer token).
 * Fed in arbitrary pieces, it answers the complete events so far (name and parsed JSON data) and
 * keeps the unfinished rest. Comments (keepalives) and events without data are skipped, as
 * EventSource does.
 */
export function createSseParser() {
  let buffer = "";
  return {
    feed(chunk: string): Array<{ event: string; data: unknown }> {
      buffer += chunk.replaceAll("\r\n", "\n").replaceAll("\r", "\n");
      const events: Array<{ event: string; data: unknown }> = [];
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line === "" || line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = value;
          else if (field === "data") data.push(value);
        }
        if (data.length === 0) continue;
        try {
          events.push({ event, data: JSON.parse(data.join("\n")) });
        } catch {
          // A malformed event is dropped; the next snapshot (after a reconnect) has it all.
        }
      }
      return events;
    },
  };
}
