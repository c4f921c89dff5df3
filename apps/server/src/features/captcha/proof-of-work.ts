import crypto from "node:crypto";
import { leadingZeroBits } from "@flotilla/domain";

/**
 * The built-in captcha (FLOTILLA_CAPTCHA=pow): the server hands out a signed challenge; the
 * browser finds a nonce so that SHA-256(challenge:nonce) starts with `difficulty` zero bits
 * (about 2^difficulty hashes, a second or so), and sends `challenge:nonce` as the captcha
 * response. Signed and timestamped, so the server keeps nothing until a response is used.
 */
export const POW_DIFFICULTY = 16;
const CHALLENGE_LIFETIME_MS = 10 * 60 * 1000;

export function createProofOfWork(secret: Uint8Array, difficulty = POW_DIFFICULTY) {
  const sign = (payload: string) => crypto.createHmac("sha256", secret).update(`pow:${payload}`).digest("base64url");
  const used = new Map<string, number>();

  const forget = (now: number) => {
    for (const [challenge, expires] of used) if (expires < now) used.delete(challenge);
  };

  return {
    difficulty,
    challenge(now = Date.now()): string {
      const payload = `${now}.${crypto.randomBytes(12).toString("base64url")}.${difficulty}`;
      return `${payload}.${sign(payload)}`;
    },

    /** True once for a fresh, correctly signed and solved `challenge:nonce`; a replay is refused. */
    verify(response: string, now = Date.now()): boolean {
      const separator = response.lastIndexOf(":");
      if (separator < 0) return false;
      const challenge = response.slice(0, separator);
      const nonce = response.slice(separator + 1);
      const [issued, random, bits, signature] = challenge.split(".");
      if (!issued || !random || !bits || !signature || !/^\d{1,20}$/.test(nonce)) return false;
      const expected = sign(`${issued}.${random}.${bits}`);
      if (
        signature.length !== expected.length ||
        !crypto.timingSafeEqual(Buffer.from(signature), Buffer.from(expected))
      ) {
        return false;
      }
      const age = now - Number(issued);
      if (!(age >= 0 && age <= CHALLENGE_LIFETIME_MS) || Number(bits) < difficulty) return false;
      const digest = crypto.createHash("sha256").update(`${challenge}:${nonce}`).digest();
      if (leadingZeroBits(digest) < Number(bits)) return false;
      forget(now);
      if (used.has(challenge)) return false;
      used.set(challenge, Number(issued) + CHALLENGE_LIFETIME_MS);
      return true;
    },
  };
}

/** What a client does: the smallest nonce that solves the challenge (used by tests and scripts). */
export function solveProofOfWork(challenge: string): string {
  const bits = Number(challenge.split(".")[2]);
  for (let nonce = 0; ; nonce++) {
    const digest = crypto.createHash("sha256").update(`${challenge}:${nonce}`).digest();
    if (leadingZeroBits(digest) >= bits) return `${challenge}:${nonce}`;
  }
}
