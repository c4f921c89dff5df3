import crypto from "node:crypto";

/**
 * Secrets the server must read back (a webhook's signing secret) are kept sealed in the database
 * with AES-256-GCM under a key derived from the server secret (FLOTILLA_SECRET or
 * data/secret.key) for one purpose: a copy of the database alone does not give them away. A value
 * stored before sealing existed (no prefix) is read as it is.
 */
const PREFIX = "sealed:v1:";

export type Sealer = { seal(text: string): string; open(stored: string): string };

export function createSealer(serverSecret: Uint8Array, purpose: string): Sealer {
  const key = Buffer.from(crypto.hkdfSync("sha256", serverSecret, "flotilla", purpose, 32));
  return {
    seal(text) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
      return `${PREFIX}${[iv, cipher.getAuthTag(), sealed].map((part) => part.toString("base64url")).join(".")}`;
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [iv, tag, sealed] = stored
        .slice(PREFIX.length)
        .split(".")
        .map((part) => Buffer.from(part, "base64url"));
      if (!iv || !tag || !sealed) throw new Error("a sealed value is damaged");
      const decipher = crypto.createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(sealed), decipher.final()]).toString("utf8");
    },
  };
}
