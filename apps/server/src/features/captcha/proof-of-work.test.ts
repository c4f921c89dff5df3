import crypto from "node:crypto";
import { leadingZeroBits } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import { createProofOfWork, solveProofOfWork } from "./proof-of-work.ts";

const secret = crypto.randomBytes(32);

describe("proof-of-work captcha", () => {
  it("counts leading zero bits", () => {
    expect(leadingZeroBits(Buffer.from([0, 0, 0x80]))).toBe(16);
    expect(leadingZeroBits(Buffer.from([0x0f]))).toBe(4);
    expect(leadingZeroBits(Buffer.from([0xff]))).toBe(0);
  });

  it("accepts a solved challenge once", () => {
    const pow = createProofOfWork(secret, 8);
    const response = solveProofOfWork(pow.challenge());
    expect(pow.verify(response)).toBe(true);
    expect(pow.verify(response)).toBe(false);
  });

  it("refuses unsolved, forged, weakened and expired challenges", () => {
    const pow = createProofOfWork(secret, 8);
    const challenge = pow.challenge();
    const [issued, random, , signature] = challenge.split(".");
    const unsolved = `${challenge}:x`;
    expect(pow.verify(unsolved)).toBe(false);
    expect(pow.verify(solveProofOfWork(`${issued}.${random}.1.${signature}`))).toBe(false);
    expect(pow.verify(solveProofOfWork(createProofOfWork(crypto.randomBytes(32), 8).challenge()))).toBe(false);
    const old = pow.challenge(Date.now() - 11 * 60 * 1000);
    expect(pow.verify(solveProofOfWork(old))).toBe(false);
    expect(pow.verify("garbage")).toBe(false);
  });
});
