import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import forge from "node-forge";
import { certificateSerial } from "./key-pair.ts";

/**
 * The API's own TLS (`config.tls`): the server certificate (with any chain) and its key as PEM
 * files, and the CA devices trust for it. The same three files are what an OpenVPN server takes
 * (`ca`, `cert`, `key`).
 */
export type ServerTls = {
  certFile: string;
  keyFile: string;
  /**
   * The CA devices trust for this server: the generated CA, or FLOTILLA_DEVICE_CA with the
   * operator's certificate; undefined: a certificate from a public CA.
   */
  caFile: string | undefined;
  /**
   * FLOTILLA_TLS=generate: the directory of the generated CA and certificate, and the names the
   * certificate covers (the server renews it). Undefined: the operator's files.
   */
  generated: { dir: string; names: string[] } | undefined;
};

/** A CA and a server certificate it issued, as files in one directory (`issueCertificates`). */
export type IssuedCertificates = {
  caFile: string;
  /** Owner-only (0600): whoever holds it can impersonate the server to every device. */
  caKeyFile: string;
  certFile: string;
  keyFile: string;
  caPem: string;
  /** This call wrote a new server certificate (none yet, near expiry, other names, damaged). */
  renewed: boolean;
};

const DAY_MS = 86_400_000;
/** Devices carry the CA in config.json for good: it must outlive them. */
const CA_VALIDITY_DAYS = 20 * 365;
/** Apple's systems refuse server certificates valid for more than 825 days even from a private CA; a year is safe everywhere. */
const SERVER_VALIDITY_DAYS = 397;
const RENEW_BEFORE_DAYS = 30;

/**
 * Makes `dir` hold a CA (`ca.crt`, `ca.key`) and a server certificate it issued for `names`
 * (`server.crt`, `server.key`; host names and IP addresses). The CA is created once and never
 * replaced; the server certificate is issued again when it is missing, expires within 30 days,
 * covers other names or does not match its key or the CA. Synchronous: it runs while the
 * configuration is read, before anything listens.
 */
export function issueCertificates(dir: string, names: string[], now = new Date()): IssuedCertificates {
  const wanted = normalizeNames(names);
  if (wanted.length === 0) throw new Error("a server certificate needs at least one name");
  const files = {
    caFile: path.join(dir, "ca.crt"),
    caKeyFile: path.join(dir, "ca.key"),
    certFile: path.join(dir, "server.crt"),
    keyFile: path.join(dir, "server.key"),
  };
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // `wx`: instances sharing the directory keep the first CA, and the CA certificate is made
  // from the key file as it is on disk.
  writeOnce(files.caKeyFile, () => rsaKeyPem(3072), 0o600);
  const caKeyPem = fs.readFileSync(files.caKeyFile, "utf8");
  writeOnce(files.caFile, () => caCertificate(caKeyPem, now), 0o644);
  const caPem = fs.readFileSync(files.caFile, "utf8");
  const ca = new crypto.X509Certificate(caPem);
  if (!ca.checkPrivateKey(crypto.createPrivateKey(caKeyPem))) {
    throw new Error(`the CA certificate ${files.caFile} is not of the key ${files.caKeyFile}`);
  }
  let renewed = false;
  // Two processes renewing at once may leave one's key beside the other's certificate: the
  // check sees it and issues again.
  for (let attempt = 0; ; attempt++) {
    if (serverCertificateIsCurrent(files, ca, wanted, now)) return { ...files, caPem, renewed };
    if (attempt === 3)
      throw new Error(`the server certificate in ${dir} keeps changing: is another process writing it?`);
    const keyPem = rsaKeyPem(2048);
    replaceFile(files.keyFile, keyPem, 0o600);
    replaceFile(files.certFile, serverCertificate(keyPem, wanted, caPem, caKeyPem, now), 0o644);
    renewed = true;
  }
}

/**
 * The server's key and certificate as Node's TLS options take them, renewed first when
 * generated and due. The server calls it at start and then daily, so a long-running process
 * picks up a renewed certificate (or the operator's new files) without a restart.
 */
export function serverTlsOptions(tls: ServerTls, now = new Date()): { cert: string; key: string } {
  if (tls.generated) issueCertificates(tls.generated.dir, tls.generated.names, now);
  return { cert: fs.readFileSync(tls.certFile, "utf8"), key: fs.readFileSync(tls.keyFile, "utf8") };
}

const CHECK_INTERVAL_MS = 12 * 3600_000;

/**
 * Checks the server's certificate every 12 hours (renewing a generated one when due) and hands a
 * changed key and certificate to `onChange`: the API's TLS server takes them with
 * `setSecureContext`, and a VPN server may restart on them. Returns a function that stops it.
 */
export function watchServerTls(
  tls: ServerTls,
  onChange: (options: { cert: string; key: string }) => void,
  onError: (error: Error) => void,
  intervalMs = CHECK_INTERVAL_MS,
): () => void {
  let current = serverTlsOptions(tls);
  const timer = setInterval(() => {
    try {
      const next = serverTlsOptions(tls);
      if (next.cert === current.cert && next.key === current.key) return;
      // Caught between the operator's copy of the key and of the certificate: wait for both.
      if (!new crypto.X509Certificate(next.cert).checkPrivateKey(crypto.createPrivateKey(next.key))) {
        throw new Error(`the certificate in ${tls.certFile} is not of the key in ${tls.keyFile}`);
      }
      onChange(next);
      current = next;
    } catch (error) {
      // The next check tries again.
      onError(error as Error);
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Lower-case names without IPv6 brackets, once each, in their first order (the first is the subject). */
function normalizeNames(names: string[]): string[] {
  return [
    ...new Set(
      names
        .map((name) =>
          name
            .trim()
            .toLowerCase()
            .replace(/^\[(.*)\]$/, "$1"),
        )
        .filter(Boolean),
    ),
  ];
}

function serverCertificateIsCurrent(
  files: { certFile: string; keyFile: string },
  ca: crypto.X509Certificate,
  names: string[],
  now: Date,
): boolean {
  let certificate: crypto.X509Certificate;
  let key: crypto.KeyObject;
  try {
    certificate = new crypto.X509Certificate(fs.readFileSync(files.certFile));
    key = crypto.createPrivateKey(fs.readFileSync(files.keyFile));
  } catch {
    return false;
  }
  const altNames = certificate.subjectAltName?.split(", ") ?? [];
  return (
    certificate.checkPrivateKey(key) &&
    certificate.checkIssued(ca) &&
    certificate.verify(ca.publicKey) &&
    new Date(certificate.validTo).getTime() - now.getTime() > RENEW_BEFORE_DAYS * DAY_MS &&
    altNames.length === names.length &&
    names.every((name) =>
      net.isIP(name) ? certificate.checkIP(name) !== undefined : certificate.checkHost(name) !== undefined,
    )
  );
}

const rsaKeyPem = (bits: number) =>
  crypto
    .generateKeyPairSync("rsa", { modulusLength: bits })
    .privateKey.export({ type: "pkcs8", format: "pem" })
    .toString();

/** A certificate of the key, valid from now for `days`, with a random serial; subject, extensions and signature to add. */
function newCertificate(keyPem: string, now: Date, days: number): forge.pki.Certificate {
  const privateKey = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.setRsaPublicKey(privateKey.n, privateKey.e);
  certificate.serialNumber = certificateSerial();
  // An hour back: a device whose clock is a little behind still accepts a new certificate.
  certificate.validity.notBefore = new Date(now.getTime() - 3600_000);
  certificate.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
  return certificate;
}

function caCertificate(caKeyPem: string, now: Date): string {
  const certificate = newCertificate(caKeyPem, now, CA_VALIDITY_DAYS);
  // A random part tells this installation's CA from another's in a trust store.
  const subject = [
    { name: "commonName", value: `Flotilla CA ${crypto.randomBytes(4).toString("hex")}` },
    { name: "organizationName", value: "Flotilla" },
  ];
  certificate.setSubject(subject);
  certificate.setIssuer(subject);
  certificate.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  certificate.sign(forge.pki.privateKeyFromPem(caKeyPem), forge.md.sha256.create());
  return pemWithNewlines(certificate);
}

function serverCertificate(keyPem: string, names: string[], caPem: string, caKeyPem: string, now: Date): string {
  const ca = forge.pki.certificateFromPem(caPem);
  const certificate = newCertificate(keyPem, now, SERVER_VALIDITY_DAYS);
  certificate.setSubject([{ name: "commonName", value: names[0] ?? "localhost" }]);
  certificate.setIssuer(ca.subject.attributes);
  certificate.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    // What TLS servers need, and what OpenVPN's `remote-cert-tls server` checks on the client.
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: names.map((name) => (net.isIP(name) ? { type: 7, ip: name } : { type: 2, value: name })),
    },
    { name: "subjectKeyIdentifier" },
    { name: "authorityKeyIdentifier", keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  certificate.sign(forge.pki.privateKeyFromPem(caKeyPem), forge.md.sha256.create());
  return pemWithNewlines(certificate);
}

/** forge writes CRLF line ends; files on Linux (and OpenVPN's, balenaOS's) read better with LF. */
const pemWithNewlines = (certificate: forge.pki.Certificate) =>
  forge.pki.certificateToPem(certificate).replaceAll("\r\n", "\n");

function writeOnce(file: string, content: () => string, mode: number) {
  if (fs.existsSync(file)) return;
  try {
    fs.writeFileSync(file, content(), { flag: "wx", mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/** Replaced whole by a rename, so a reader never sees half a file. */
function replaceFile(file: string, content: string, mode: number) {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, content, { mode });
  fs.chmodSync(temporary, mode);
  fs.renameSync(temporary, file);
}
