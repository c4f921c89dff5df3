import { Transform } from "node:stream";

/**
 * Passes at most `limit` bytes and fails with `tooLarge()` beyond them: the bound on a streamed
 * body, before or after it is unpacked (a few KiB of gzip can unpack to gigabytes).
 */
export function byteCap(limit: number, tooLarge: () => Error): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(tooLarge());
      else done(null, chunk);
    },
  });
}
