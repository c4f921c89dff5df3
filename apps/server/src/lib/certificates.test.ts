import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { issueCertificates, type ServerTls, watchServerTls } from "./certificates.ts";

const dirs: string[] = [];
const tmp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-certificates-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const DAY_MS = 86_400_000;
const NAMES = ["api.example.com", "localhost", "127.0.0.1", "::1"];
const read = (file: string) => fs.readFileSync(file, "utf8");

describe("issueCertificates", () => {
  it("makes a CA and a server certificate for the names, signed by it, for TLS servers", () => {
    const issued = issueCertificates(tmp(), [...NAMES, "[::1]", "LOCALHOST"]);
    expect(issued.renewed).toBe(true);
    const ca = new crypto.X509Certificate(issued.caPem);
    const server = new crypto.X509Certificate(read(issued.certFile));
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca) && server.verify(ca.publicKey)).toBe(true);
    expect(server.checkPrivateKey(crypto.createPrivateKey(read(issued.keyFile)))).toBe(true);
    // Names once each, brackets and case gone.
    expect(server.subjectAltName).toBe(
      "DNS:api.example.com, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1",
    );
    expect(server.subject).toBe("CN=api.example.com");
    expect(server.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(fs.statSync(issued.caKeyFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(issued.keyFile).mode & 0o777).toBe(0o600);
    expect(issued.caPem).not.toContain("\r");
  });

  it("keeps a current certificate, and renews it near its expiry, for other names or a key that is not its own; the CA stays", () => {
    const dir = tmp();
    const first = issueCertificates(dir, NAMES);
    const certificate = read(first.certFile);
    // The same names in another order: nothing to do.
    expect(issueCertificates(dir, [...NAMES].reverse()).renewed).toBe(false);
    expect(issueCertificates(dir, NAMES, new Date(Date.now() + 300 * DAY_MS)).renewed).toBe(false);
    expect(read(first.certFile)).toBe(certificate);

    const late = issueCertificates(dir, NAMES, new Date(Date.now() + 380 * DAY_MS));
    expect(late.renewed).toBe(true);
    expect(new Date(new crypto.X509Certificate(read(late.certFile)).validTo).getTime()).toBeGreaterThan(
      Date.now() + 700 * DAY_MS,
    );

    const moved = issueCertificates(dir, ["fleet.example.com", "localhost"]);
    expect(moved.renewed).toBe(true);
    expect(new crypto.X509Certificate(read(moved.certFile)).subjectAltName).toBe(
      "DNS:fleet.example.com, DNS:localhost",
    );

    fs.writeFileSync(
      moved.keyFile,
      crypto.generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }),
    );
    expect(issueCertificates(dir, ["fleet.example.com", "localhost"]).renewed).toBe(true);
    expect(read(moved.caFile)).toBe(first.caPem);
    expect(read(moved.caKeyFile)).toBe(read(first.caKeyFile));
  });

  it("refuses a CA certificate that is not of the CA key, rather than replace the CA devices trust", () => {
    const dir = tmp();
    issueCertificates(dir, NAMES);
    fs.copyFileSync(issueCertificates(tmp(), NAMES).caFile, path.join(dir, "ca.crt"));
    expect(() => issueCertificates(dir, NAMES)).toThrow(/is not of the key/);
  });
});

describe("watchServerTls", () => {
  it("hands over a changed certificate once it matches its key, and reports one it cannot read", async () => {
    const first = issueCertificates(tmp(), ["localhost"]);
    const tls: ServerTls = {
      certFile: first.certFile,
      keyFile: first.keyFile,
      caFile: undefined,
      generated: undefined,
    };
    const changes: string[] = [];
    const errors: Error[] = [];
    const stop = watchServerTls(
      tls,
      (options) => changes.push(options.cert),
      (error) => errors.push(error),
      20,
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(changes).toEqual([]);
      // The operator's renewal tool replaces the files.
      const next = issueCertificates(tmp(), ["localhost"]);
      fs.copyFileSync(next.keyFile, first.keyFile);
      // A key without its certificate yet is not handed over.
      await expect.poll(() => errors.length, { timeout: 2000, interval: 20 }).toBeGreaterThan(0);
      expect(errors[0]?.message).toMatch(/is not of the key/);
      expect(changes).toEqual([]);
      fs.copyFileSync(next.certFile, first.certFile);
      await expect.poll(() => changes, { timeout: 2000, interval: 20 }).toEqual([read(next.certFile)]);
      errors.length = 0;
      fs.rmSync(first.certFile);
      await expect.poll(() => errors.length, { timeout: 2000, interval: 20 }).toBeGreaterThan(0);
      expect(errors[0]?.message).toMatch(/ENOENT/);
    } finally {
      stop();
    }
  });
});
