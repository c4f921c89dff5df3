import { CHUNK_LOAD_TIMEOUT_MS } from "@flotilla/domain";

export const CHUNK_LOAD_TIMEOUT_CODE = "FlotillaChunkLoadTimeout";

export class ChunkLoadTimeoutError extends Error {
  readonly code = CHUNK_LOAD_TIMEOUT_CODE;
  constructor(ms: number) {
    super(`Loading a part of the dashboard did not finish within ${ms / 1000} s`);
    this.name = "ChunkLoadTimeoutError";
  }
}

/** Rejects with ChunkLoadTimeoutError when `promise` has not settled within `ms` (120 s, spec 1 §9). */
export function withChunkTimeout<T>(promise: Promise<T>, ms = CHUNK_LOAD_TIMEOUT_MS): Promise<T> {
  let handle: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    handle = setTimeout(() => reject(new ChunkLoadTimeoutError(ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(handle));
}
