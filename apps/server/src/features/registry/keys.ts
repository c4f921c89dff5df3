import path from "node:path";
import type { Config } from "../../config.ts";
import { type KeyPair, loadKeyPair } from "../../lib/key-pair.ts";

/** The key that signs registry tokens (RS256), and its self-signed certificate (the registry's `rootcertbundle`). */
export type RegistryKeys = KeyPair;

/**
 * FLOTILLA_REGISTRY_KEY/_CERT when set; otherwise `registry/token.key` and `registry/token.crt`
 * in the data directory, generated on first start.
 */
export function loadRegistryKeys(config: Pick<Config, "registry" | "dataDir">): RegistryKeys {
  const keyFile = config.registry?.keyFile ?? path.join(config.dataDir, "registry", "token.key");
  const certFile = config.registry?.certFile ?? path.join(config.dataDir, "registry", "token.crt");
  return loadKeyPair(keyFile, certFile, {
    generate: !config.registry?.keyFile,
    commonName: "Flotilla registry token issuer",
  });
}
