import crypto from "node:crypto";
import { mkdirSync } from "node:fs";
import { generate } from "otplib";
import type { Page } from "playwright-core";

/** Screenshots of the account pages for people to look at (outside the repository). */
export async function shot(page: Page, name: string) {
  mkdirSync("/tmp/shots", { recursive: true });
  await page.waitForTimeout(350); // let transitions settle
  await page.screenshot({ path: `/tmp/shots/${name}.png`, fullPage: true });
}

/** A fresh ed25519 public key in OpenSSH format. */
export function sshPublicKey(comment = "e2e@flotilla"): string {
  const { publicKey } = crypto.generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  const part = (buffer: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(buffer.length);
    return Buffer.concat([length, buffer]);
  };
  const wire = Buffer.concat([part(Buffer.from("ssh-ed25519")), part(raw)]);
  return `ssh-ed25519 ${wire.toString("base64")} ${comment}`;
}

/** The time step of the last TOTP code the server accepted (it takes a code once, and only of a later step). */
export type TotpSteps = { last: number };

/**
 * A TOTP code for `secret` of a step after the last one used. The server allows one period of
 * clock drift, so the next period's code is good already; only a third code within one period
 * waits for the next.
 */
export async function freshTotp(secret: string, used: TotpSteps): Promise<string> {
  for (;;) {
    const current = Math.floor(Date.now() / 30_000);
    const step = Math.max(used.last + 1, current);
    if (step <= current + 1) {
      used.last = step;
      return generate({ secret, epoch: step * 30 });
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

export async function logIn(page: Page, dashboardUrl: string, username: string, password: string) {
  await page.goto(`${dashboardUrl}/login`);
  await page.getByLabel("Email or username").fill(username);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
}

export async function logOutFromMenu(page: Page) {
  await page.getByRole("button", { name: "Account menu" }).click();
  await page.getByRole("menuitem", { name: "Log out" }).click();
  await page.waitForURL(/\/login$/);
}
