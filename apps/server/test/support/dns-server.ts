import dgram from "node:dgram";
import type { AddressInfo } from "node:net";
import * as dnsPacket from "dns-packet";

/**
 * A small authoritative DNS server on 127.0.0.1 (UDP, a free port) for domain verification
 * tests: the TXT records a test publishes, NXDOMAIN for names it never heard of, and an empty
 * answer (NODATA) for a name it knows without TXT records. `server` is the FLOTILLA_DNS_SERVERS
 * value that points the API at it.
 */
export type TestDnsServer = Awaited<ReturnType<typeof startDnsServer>>;

const SERVFAIL = 2;
const NXDOMAIN = 3;

export async function startDnsServer() {
  const records = new Map<string, string[]>();
  const failing = new Set<string>();
  const socket = dgram.createSocket("udp4");
  const queries: string[] = [];
  socket.on("message", (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, "");
    queries.push(`${question.type} ${name}`);
    const known = records.get(name);
    const answers =
      question.type === "TXT" && known && !failing.has(name)
        ? known.map((text) => ({ type: "TXT" as const, name: question.name, ttl: 0, data: [text] }))
        : [];
    const response = dnsPacket.encode({
      type: "response",
      id: query.id ?? 0,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (failing.has(name) ? SERVFAIL : known ? 0 : NXDOMAIN),
      questions: query.questions ?? [],
      answers,
    });
    socket.send(response, remote.port, remote.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(0, "127.0.0.1", () => resolve());
  });
  const { port } = socket.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`,
    /** The questions asked, as `TYPE name`. */
    queries,
    /** Publishes these TXT records at `name` (replacing its earlier ones); `[]` for a name without TXT. */
    setTxt(name: string, texts: string[]) {
      records.set(name.toLowerCase(), texts);
    },
    /** Answers SERVFAIL for `name` (a broken zone: no answer either way) until `failing` is false. */
    setFailing(name: string, fails = true) {
      if (fails) failing.add(name.toLowerCase());
      else failing.delete(name.toLowerCase());
    },
    /** Forgets `name`: it no longer exists (NXDOMAIN). */
    remove(name: string) {
      records.delete(name.toLowerCase());
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
