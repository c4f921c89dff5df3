import { leadingZeroBits } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import { solveProofOfWork } from "./pow.ts";

describe("solveProofOfWork", () => {
  it("counts leading zero bits", () => {
    expect(leadingZeroBits(Uint8Array.from([0, 0x0f, 0xff]))).toBe(12);
    expect(leadingZeroBits(Uint8Array.from([0x80]))).toBe(0);
  });

  it("finds a nonce whose digest has the asked zero bits, reporting progress", async () => {
    const progress: number[] = [];
    const answer = await solveProofOfWork("1.abc.10.sig", 10, { onProgress: (p) => progress.push(p) });
    expect(answer.startsWith("1.abc.10.sig:")).toBe(true);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(answer)));
    expect(leadingZeroBits(digest)).toBeGreaterThanOrEqual(10);
    expect(progress.at(-1)).toBe(1);
  });
});
