import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export type Mail = { to: string[]; subject: string; body: string };

/** Quoted-printable soft breaks and =XX escapes, decoded as UTF-8 (enough to read links). */
function decodeQuotedPrintable(input: string): string {
  const joined = input.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined.slice(i + 1, i + 3);
    if (joined[i] === "=" && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i] ?? "", "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

/**
 * A real SMTP server for the specs (no authentication, no TLS), started on a free port:
 * pass `url` as SMTP_URL to startFlotilla and read what the server sent.
 */
export async function startMailServer() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const subject = /^subject:\s*(.*)$/im.exec(raw)?.[1]?.trim() ?? "";
        mails.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
          subject,
          body: decodeQuotedPrintable(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** The match of `pattern` in the latest mail to `address` that has one. */
    async waitForLink(address: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (const mail of [...mails].reverse()) {
          if (!mail.to.includes(address.toLowerCase())) continue;
          const match = pattern.exec(mail.body);
          if (match) return match[0];
        }
        if (Date.now() > deadline) throw new Error(`No mail to ${address} matching ${pattern} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
