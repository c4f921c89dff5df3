/**
 * Route options for what only devices call — state reports, log streams, registration, cloudlink.
 * Devices are no browsers: helmet's headers and CORS are left out, which were a tenth of the
 * report path's time (docs/benchmarks.md "Device path"), and so is the compression hook (these
 * answers are empty or a stream). The target-state GET keeps all three: the dashboard's
 * diagnostics page reads it too, and devices on slow links get it compressed.
 */
export const DEVICE_ONLY = { helmet: false, compress: false, decompress: false, config: { cors: false } } as const;

declare module "fastify" {
  interface FastifyContextConfig {
    /** @fastify/cors skips a route whose config says `cors: false`. */
    cors?: false;
  }
}
