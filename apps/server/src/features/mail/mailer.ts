import nodemailer from "nodemailer";
import type { Config } from "../../config.ts";
import type { Orm } from "../../db/index.ts";
import { outbox_email } from "../../db/schema/index.ts";
import type { MailContent } from "./templates.ts";

type Log = { info(object: object, message: string): void; error(object: object, message: string): void };

/**
 * Sends mail over SMTP_URL with nodemailer. Without SMTP_URL nothing leaves the server: each
 * message is kept in the `outbox_email` table and its link is logged, so a single-machine
 * install can still verify accounts and reset passwords.
 */
export function createMailer(config: Pick<Config, "smtpUrl" | "mailFrom">, orm: Orm, log: Log) {
  const transport = config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : undefined;
  const from = config.mailFrom;

  return {
    /** Sends (or keeps) one mail; a failure is logged, not thrown: the user can ask again. */
    async send(to: string, mail: MailContent): Promise<boolean> {
      try {
        await deliver(to, mail);
        return true;
      } catch (error) {
        log.error({ err: error, to, subject: mail.subject }, "mail could not be sent");
        return false;
      }
    },
    close() {
      transport?.close();
    },
  };

  async function deliver(to: string, mail: MailContent) {
    if (!transport) {
      await orm.insert(outbox_email).values({ recipient: to, subject: mail.subject, text: mail.text, html: mail.html });
      log.info({ to, subject: mail.subject, link: mail.link }, `mail kept in the outbox (no SMTP_URL): ${mail.link}`);
      return;
    }
    await transport.sendMail({
      from,
      to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      ...(mail.attachments ? { attachments: mail.attachments } : {}),
    });
  }
}

export type Mailer = ReturnType<typeof createMailer>;
