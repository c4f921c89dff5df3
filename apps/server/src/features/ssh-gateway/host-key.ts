import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * The gateway's host key, `ssh_host_ecdsa_key` in the data directory: generated on first start
 * and kept, so clients see the same host from one start to the next (and instances sharing the
 * data directory keep the first one, as with secret.key). SEC1 PEM, which ssh2 reads.
 */
export function loadSshHostKey(dataDir: string): string {
  const file = path.join(dataDir, "ssh_host_ecdsa_key");
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    const { privateKey } = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    try {
      fs.writeFileSync(file, privateKey.export({ type: "sec1", format: "pem" }), { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return fs.readFileSync(file, "utf8");
}
