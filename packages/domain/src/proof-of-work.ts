/**
 * The built-in proof-of-work captcha's rule, shared by the server (which checks an answer) and
 * the dashboard (which finds one): SHA-256("{challenge}:{nonce}") must start with `difficulty`
 * zero bits.
 */
export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}
