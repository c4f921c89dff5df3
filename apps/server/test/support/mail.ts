import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export type ReceivedMail = { from: string; to: string[]; subject: string; text: string; html: string; raw: string };

/** Quoted-printable (RFC 2045): soft line breaks and =XX bytes, decoded as UTF-8. */
export function decodeQuotedPrintable(input: string): string {
  const bytes: number[] = [];
  const body = input.replace(/=\r?\n/g, "");
  for (let i = 0; i < body.length; i++) {
    const char = body[i] ?? "";
    const hex = body.slice(i + 1, i + 3);
    if (char === "=" && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char, "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

function decodePart(headers: string, body: string): string {
  if (/content-transfer-encoding:\s*quoted-printable/i.test(headers)) return decodeQuotedPrintable(body);
  if (/content-transfer-encoding:\s*base64/i.test(headers)) return Buffer.from(body, "base64").toString("utf8");
  return body;
}

const splitHead = (raw: string) => {
  const at = raw.search(/\r?\n\r?\n/);
  return at < 0 ? { head: raw, body: "" } : { head: raw.slice(0, at), body: raw.slice(at).replace(/^\r?\n\r?\n/, "") };
};

/** Enough MIME for nodemailer's messages: a text part and an HTML part, possibly in multipart/alternative. */
export function parseMail(raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const { head, body } = splitHead(raw);
  const unfolded = head.replace(/\r?\n[ \t]+/g, " ");
  const subjectLine = /^subject:\s*(.*)$/im.exec(unfolded)?.[1] ?? "";
  const subject = subjectLine.replace(/=\?utf-8\?([QB])\?(.*?)\?=/gi, (_m, kind: string, data: string) =>
    kind.toUpperCase() === "B"
      ? Buffer.from(data, "base64").toString("utf8")
      : decodeQuotedPrintable(data.replace(/_/g, " ")),
  );
  let text = "";
  let html = "";
  const boundary = /boundary="?([^";\s]+)"?/i.exec(unfolded)?.[1];
  const parts = boundary
    ? body
        .split(`--${boundary}`)
        .slice(1)
        .filter((part) => !part.startsWith("--"))
    : [raw];
  for (const part of parts) {
    const { head: partHead, body: partBody } = splitHead(part.replace(/^\r?\n/, ""));
    const decoded = decodePart(partHead, partBody.replace(/\r?\n$/, ""));
    if (/content-type:\s*text\/html/i.test(partHead)) html = decoded;
    else if (/content-type:\s*text\/plain/i.test(partHead)) text = decoded;
  }
  return { ...envelope, subject, text, html, raw };
}

/**
 * A real SMTP server on a free port that keeps every message it receives. `url` goes into
 * SMTP_URL; `next(to)` waits for the next message to that address.
 */
export async function startMailServer() {
  const received: ReceivedMail[] = [];
  const waiters: { to: string; resolve: (mail: ReceivedMail) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const mail = parseMail(Buffer.concat(chunks).toString("utf8"), {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
        });
        received.push(mail);
        for (const waiter of [...waiters]) {
          if (mail.to.includes(waiter.to)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(mail);
          }
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  const consumed = new Set<ReceivedMail>();
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    /** Mails to `to` received so far. */
    to: (to: string) => received.filter((mail) => mail.to.includes(to.toLowerCase())),
    /** The next mail to `to` not yet returned by `next`, waiting up to `timeoutMs`. */
    async next(to: string, timeoutMs = 5000): Promise<ReceivedMail> {
      const address = to.toLowerCase();
      const pending = received.find((mail) => !consumed.has(mail) && mail.to.includes(address));
      if (pending) {
        consumed.add(pending);
        return pending;
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail to ${to} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          to: address,
          resolve: (mail) => {
            clearTimeout(timer);
            consumed.add(mail);
            resolve(mail);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type MailServer = Awaited<ReturnType<typeof startMailServer>>;

/** The first link to the dashboard in a mail's text. */
export const linkIn = (mail: ReceivedMail) => /https?:\/\/\S+/.exec(mail.text)?.[0] ?? "";
