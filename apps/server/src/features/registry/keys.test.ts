import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { selfSignedCertificate } from "../../lib/key-pair.ts";
import { loadRegistryKeys } from "./keys.ts";

const dirs: string[] = [];
const tmp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-registry-keys-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
const registry = {
  url: "https://registry.example.com",
  host: "registry.example.com",
  keyFile: undefined,
  certFile: undefined,
};

describe("registry token keys", () => {
  it("generates a key and a self-signed CA certificate of it once, into the data directory", () => {
    const dataDir = tmp();
    const first = loadRegistryKeys({ dataDir, registry });
    const again = loadRegistryKeys({ dataDir, registry });
    expect(again.certificatePem).toBe(first.certificatePem);
    expect(fs.statSync(path.join(dataDir, "registry", "token.key")).mode & 0o777).toBe(0o600);
    const certificate = new crypto.X509Certificate(first.certificatePem);
    expect(certificate.ca).toBe(true);
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    expect(certificate.raw.toString("base64")).toBe(first.certificateDer);
  });

  it("makes certificates OpenSSL reads, whatever the random serial (no illegal padding)", () => {
    const key = crypto
      .generateKeyPairSync("rsa", { modulusLength: 1024 })
      .privateKey.export({ type: "pkcs1", format: "pem" })
      .toString();
    // Random bytes starting with zero once made a serial OpenSSL refused (1 certificate in 256).
    for (const first of [0x00, 0x01, 0x7f, 0x80, 0xff]) {
      const random = crypto.randomBytes(16);
      random[0] = first;
      expect(() => new crypto.X509Certificate(selfSignedCertificate(key, "test", new Date(), random))).not.toThrow();
    }
  });

  it("reads FLOTILLA_REGISTRY_KEY/_CERT and refuses a certificate of another key", () => {
    const dir = tmp();
    const key = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const keyFile = path.join(dir, "key.pem");
    const certFile = path.join(dir, "cert.pem");
    fs.writeFileSync(keyFile, key.export({ type: "pkcs8", format: "pem" }));
    fs.writeFileSync(certFile, selfSignedCertificate(key.export({ type: "pkcs1", format: "pem" }).toString(), "test"));
    const keys = loadRegistryKeys({ dataDir: dir, registry: { ...registry, keyFile, certFile } });
    expect(keys.privateKey.asymmetricKeyType).toBe("rsa");
    const other = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    fs.writeFileSync(keyFile, other.export({ type: "pkcs8", format: "pem" }));
    expect(() => loadRegistryKeys({ dataDir: dir, registry: { ...registry, keyFile, certFile } })).toThrow(
      /is not of the key/,
    );
  });
});
