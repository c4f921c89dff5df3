import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import forge from "node-forge";

/** A signing key and its self-signed certificate (registry tokens, SAML requests). */
export type KeyPair = {
  privateKey: crypto.KeyObject;
  publicKey: crypto.KeyObject;
  certificatePem: string;
  /** The certificate as base64 DER (a JWT `x5c` header, SAML metadata). */
  certificateDer: string;
};

const CERT_YEARS = 10;

/**
 * The RSA key and certificate in `keyFile`/`certFile`; with `generate`, created on first use
 * (like secret.key). Files are written with `wx`, so instances sharing a data directory keep the
 * first pair.
 */
export function loadKeyPair(
  keyFile: string,
  certFile: string,
  options: { generate: boolean; commonName: string },
): KeyPair {
  if (options.generate) {
    fs.mkdirSync(path.dirname(keyFile), { recursive: true });
    writeOnce(
      keyFile,
      () =>
        crypto
          .generateKeyPairSync("rsa", { modulusLength: 2048 })
          .privateKey.export({ type: "pkcs1", format: "pem" })
          .toString(),
      0o600,
    );
    writeOnce(certFile, () => selfSignedCertificate(fs.readFileSync(keyFile, "utf8"), options.commonName), 0o644);
  }
  return readKeys(keyFile, certFile);
}

function writeOnce(file: string, content: () => string, mode: number) {
  if (fs.existsSync(file)) return;
  try {
    fs.writeFileSync(file, content(), { flag: "wx", mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

function readKeys(keyFile: string, certFile: string): KeyPair {
  const privateKey = crypto.createPrivateKey(fs.readFileSync(keyFile, "utf8"));
  if (privateKey.asymmetricKeyType !== "rsa") throw new Error(`${keyFile} must hold an RSA private key`);
  const certificatePem = fs.readFileSync(certFile, "utf8");
  const certificate = new crypto.X509Certificate(certificatePem);
  if (!certificate.checkPrivateKey(privateKey))
    throw new Error(`The certificate in ${certFile} is not of the key in ${keyFile}`);
  return {
    privateKey,
    publicKey: crypto.createPublicKey(privateKey),
    certificatePem,
    certificateDer: certificate.raw.toString("base64"),
  };
}

/**
 * A positive 128-bit serial (hex) in minimal DER: first byte 0x40–0x7f (a leading 00 before a
 * byte under 0x80 is "illegal padding" to OpenSSL, and then the certificate cannot be read).
 */
export function certificateSerial(random = crypto.randomBytes(16)): string {
  const serial = Buffer.from(random);
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
  return serial.toString("hex");
}

/** A self-signed CA certificate of the key: the registry trusts it as its root and finds it in each token's x5c. */
export function selfSignedCertificate(
  privateKeyPem: string,
  commonName: string,
  now = new Date(),
  random = crypto.randomBytes(16),
): string {
  const privateKey = forge.pki.privateKeyFromPem(privateKeyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(privateKey.n, privateKey.e);
  cert.serialNumber = certificateSerial(random);
  cert.validity.notBefore = new Date(now.getTime() - 24 * 3600_000);
  cert.validity.notAfter = new Date(now.getTime() + CERT_YEARS * 365 * 24 * 3600_000);
  const subject = [{ name: "commonName", value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true },
    { name: "keyUsage", digitalSignature: true, keyCertSign: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}
