import { leadingZeroBits } from "@flotilla/domain";

/**
 * The built-in proof-of-work captcha (FLOTILLA_CAPTCHA=pow): find the smallest nonce so that
 * SHA-256("{challenge}:{nonce}") starts with `difficulty` zero bits; the answer is
 * "{challenge}:{nonce}". Runs in batches of Web Crypto digests so the page stays responsive,
 * reporting progress against the expected 2^difficulty attempts.
 */
const BATCH = 512;

export async function solveProofOfWork(
  challenge: string,
  difficulty: number,
  options: { onProgress?: (fraction: number) => void; signal?: AbortSignal } = {},
): Promise<string> {
  const encoder = new TextEncoder();
  const expected = 2 ** difficulty;
  for (let start = 0; ; start += BATCH) {
    if (options.signal?.aborted) throw new DOMException("Aborted", "AbortError");
    const digests = await Promise.all(
      Array.from({ length: BATCH }, (_, i) =>
        crypto.subtle.digest("SHA-256", encoder.encode(`${challenge}:${start + i}`)),
      ),
    );
    const found = digests.findIndex((digest) => leadingZeroBits(new Uint8Array(digest)) >= difficulty);
    if (found >= 0) {
      options.onProgress?.(1);
      return `${challenge}:${start + found}`;
    }
    // Expected work is 2^difficulty; past it, creep towards (never reach) 100 %.
    const done = start + BATCH;
    options.onProgress?.(done < expected ? (done / expected) * 0.9 : 0.9 + 0.09 * (1 - expected / done));
  }
}
