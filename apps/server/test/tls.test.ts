import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { issueCertificates } from "../src/lib/certificates.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { eventually } from "./support/agent.ts";

/**
 * The API's own TLS (issue 35, "TLS"): balena's Supervisor streams logs over HTTPS only and
 * trusts the CA of config.json's `balenaRootCA`. Clients here trust that CA and nothing else.
 */
const dirs: string[] = [];
const tmp = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `flotilla-tls-${name}-`));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

type Answer = { status: number; text: string };

/** One HTTPS request on a fresh connection; `ca` given: the only root it trusts. */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; ca?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const client = url.startsWith("https:") ? https : http;
    const outgoing = client.request(
      url,
      {
        method: options.method ?? "GET",
        headers: options.headers,
        agent: false,
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

const json = (token: string, body: unknown) => ({
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("FLOTILLA_TLS=generate", () => {
  let t: TestApp;
  let dataDir: string;
  let ca: string;

  beforeAll(async () => {
    dataDir = tmp("data");
    t = await createTestApp({ FLOTILLA_TLS: "generate", FLOTILLA_DATA_DIR: dataDir });
    ca = fs.readFileSync(path.join(dataDir, "tls", "ca.crt"), "utf8");
  });
  afterAll(() => t.close());

  it("generates a CA and a server certificate into the data directory, the keys owner-only", () => {
    expect(t.config.tls).toEqual({
      certFile: path.join(dataDir, "tls", "server.crt"),
      keyFile: path.join(dataDir, "tls", "server.key"),
      caFile: path.join(dataDir, "tls", "ca.crt"),
      generated: { dir: path.join(dataDir, "tls"), names: expect.arrayContaining(["localhost", "127.0.0.1"]) },
    });
    expect(fs.statSync(path.join(dataDir, "tls", "ca.key")).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dataDir, "tls", "server.key")).mode & 0o777).toBe(0o600);
    expect(t.config.apiUrl).toMatch(/^https:\/\/localhost:/);
    expect(t.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
  });

  it("answers a client that trusts only the generated CA; refuses one without it, and plain HTTP", async () => {
    expect(await request(`${t.url}/ping`, { ca })).toEqual({ status: 200, text: "OK" });
    // Node's own roots: the CA is not among them (the server sends its certificate alone).
    await expect(request(`${t.url}/ping`)).rejects.toMatchObject({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    // Another CA trusted instead of this one.
    const other = issueCertificates(tmp("other"), ["localhost", "127.0.0.1"]);
    await expect(request(`${t.url}/ping`, { ca: other.caPem })).rejects.toMatchObject({
      code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    });
    await expect(request(t.url.replace("https:", "http:"))).rejects.toThrow();
  });

  it("a balenaOS device's way: config.json with the https API and the CA as balenaRootCA, then register and stream logs over TLS", async () => {
    const owner = await t.factories.user();
    const org = await t.factories.organization({ name: "TlsCo", admins: [owner.user] });
    const fleet = await t.factories.fleet(org, { name: "tls-fleet" });
    const answer = await request(`${t.url}/download-config`, {
      ...json(owner.token, { appId: fleet.id, version: "6.1.0", network: "ethernet" }),
      ca,
    });
    expect(answer.status).toBe(200);
    const config = JSON.parse(answer.text) as { apiEndpoint: string; apiKey: string; balenaRootCA: string };
    expect(config.apiEndpoint).toBe(t.config.apiUrl);
    expect(config.apiEndpoint.startsWith("https://")).toBe(true);
    expect(Buffer.from(config.balenaRootCA, "base64").toString()).toBe(ca);

    // From here on the device trusts what config.json gave it, as balenaOS does.
    const trusted = Buffer.from(config.balenaRootCA, "base64").toString();
    const uuid = crypto.randomBytes(16).toString("hex");
    const deviceKey = crypto.randomBytes(20).toString("hex");
    const registered = await request(`${t.url}/device/register`, {
      ...json(config.apiKey, { application: fleet.id, uuid, device_type: "raspberrypi4-64", api_key: deviceKey }),
      ca: trusted,
    });
    expect(registered.status).toBe(201);
    const line = JSON.stringify({ message: "hello over TLS", timestamp: Date.now(), isSystem: false });
    const logged = await request(`${t.url}/device/v2/${uuid}/log-stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${deviceKey}`, "content-type": "application/x-ndjson" },
      body: `${line}\n`,
      ca: trusted,
    });
    expect(logged.status).toBe(201);
    let lines: unknown[] = [];
    await eventually(async () => {
      const logs = await request(`${t.url}/device/v2/${uuid}/logs`, {
        headers: { authorization: `Bearer ${owner.token}` },
        ca,
      });
      lines = logs.status === 200 ? (JSON.parse(logs.text) as unknown[]) : [];
      return lines.length > 0;
    });
    expect(lines).toEqual([expect.objectContaining({ message: "hello over TLS" })]);
  });

  it("a restart keeps the CA and the certificate; a new API URL gets a new certificate from the same CA", async () => {
    const certificate = fs.readFileSync(path.join(dataDir, "tls", "server.crt"), "utf8");
    const again = await createTestApp({ FLOTILLA_TLS: "generate", FLOTILLA_DATA_DIR: dataDir });
    try {
      expect(fs.readFileSync(path.join(dataDir, "tls", "ca.crt"), "utf8")).toBe(ca);
      expect(fs.readFileSync(path.join(dataDir, "tls", "server.crt"), "utf8")).toBe(certificate);
      expect(await request(`${again.url}/ping`, { ca })).toEqual({ status: 200, text: "OK" });
    } finally {
      await again.close();
    }

    const moved = loadConfig({
      FLOTILLA_TLS: "generate",
      FLOTILLA_DATA_DIR: dataDir,
      FLOTILLA_API_URL: "https://fleet.example.com",
    });
    expect(moved.apiUrl).toBe("https://fleet.example.com");
    expect(fs.readFileSync(path.join(dataDir, "tls", "ca.crt"), "utf8")).toBe(ca);
    const renewed = new crypto.X509Certificate(fs.readFileSync(path.join(dataDir, "tls", "server.crt")));
    expect(renewed.checkHost("fleet.example.com")).toBe("fleet.example.com");
    expect(renewed.checkIssued(new crypto.X509Certificate(ca))).toBe(true);
    expect(moved.deviceCa).toBe(ca);
  });
});

describe("FLOTILLA_TLS_CERT and FLOTILLA_TLS_KEY", () => {
  let issued: ReturnType<typeof issueCertificates>;
  beforeAll(() => {
    issued = issueCertificates(tmp("operator"), ["localhost", "127.0.0.1"]);
  });

  it("serves the operator's certificate; balenaRootCA is FLOTILLA_DEVICE_CA", async () => {
    const t = await createTestApp({
      FLOTILLA_TLS_CERT: issued.certFile,
      FLOTILLA_TLS_KEY: issued.keyFile,
      FLOTILLA_DEVICE_CA: issued.caFile,
    });
    try {
      expect(t.config.tls).toEqual({
        certFile: issued.certFile,
        keyFile: issued.keyFile,
        caFile: issued.caFile,
        generated: undefined,
      });
      expect(t.config.deviceCa).toBe(issued.caPem);
      expect(await request(`${t.url}/ping`, { ca: issued.caPem })).toEqual({ status: 200, text: "OK" });
      await expect(request(`${t.url}/ping`)).rejects.toMatchObject({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    } finally {
      await t.close();
    }
    // A certificate from a public CA: devices need no balenaRootCA.
    const publicCa = loadConfig({ FLOTILLA_TLS_CERT: issued.certFile, FLOTILLA_TLS_KEY: issued.keyFile });
    expect(publicCa.deviceCa).toBeUndefined();
    expect(publicCa.tls?.caFile).toBeUndefined();
  });

  it("refuses a lone certificate or key, a missing or unreadable file, a file of the wrong kind and a key of another certificate", () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ FLOTILLA_DATA_DIR: tmp("refused"), ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error("loadConfig accepted it");
    };
    const dir = tmp("files");
    const other = issueCertificates(tmp("another"), ["localhost"]);
    expect(refusal({ FLOTILLA_TLS_KEY: issued.keyFile })).toBe(
      "Invalid FLOTILLA_TLS_CERT: FLOTILLA_TLS_CERT and FLOTILLA_TLS_KEY are set together",
    );
    expect(refusal({ FLOTILLA_TLS_CERT: issued.certFile })).toBe(
      "Invalid FLOTILLA_TLS_KEY: FLOTILLA_TLS_CERT and FLOTILLA_TLS_KEY are set together",
    );
    expect(refusal({ FLOTILLA_TLS_CERT: path.join(dir, "missing.crt"), FLOTILLA_TLS_KEY: issued.keyFile })).toMatch(
      /^Invalid FLOTILLA_TLS_CERT=".*missing\.crt": not a readable file \(ENOENT/,
    );
    // A directory cannot be read as a file.
    expect(refusal({ FLOTILLA_TLS_CERT: issued.certFile, FLOTILLA_TLS_KEY: dir })).toMatch(
      /^Invalid FLOTILLA_TLS_KEY=".*": not a readable file \(EISDIR/,
    );
    expect(refusal({ FLOTILLA_TLS_CERT: issued.keyFile, FLOTILLA_TLS_KEY: issued.keyFile })).toMatch(
      /^Invalid FLOTILLA_TLS_CERT=".*": must be a PEM file of the server certificate/,
    );
    expect(refusal({ FLOTILLA_TLS_CERT: issued.certFile, FLOTILLA_TLS_KEY: issued.certFile })).toMatch(
      /^Invalid FLOTILLA_TLS_KEY=".*": must be a PEM file of an unencrypted private key/,
    );
    expect(refusal({ FLOTILLA_TLS_CERT: issued.certFile, FLOTILLA_TLS_KEY: other.keyFile })).toMatch(
      /^Invalid FLOTILLA_TLS_KEY=".*": not the key of the certificate in FLOTILLA_TLS_CERT/,
    );
    expect(
      refusal({ FLOTILLA_TLS: "generate", FLOTILLA_TLS_CERT: issued.certFile, FLOTILLA_TLS_KEY: issued.keyFile }),
    ).toMatch(/^Invalid FLOTILLA_TLS="generate": not with FLOTILLA_TLS_CERT/);
    expect(refusal({ FLOTILLA_TLS: "yes" })).toMatch(/^Invalid FLOTILLA_TLS="yes": must be generate/);
    expect(refusal({ FLOTILLA_TLS: "generate", FLOTILLA_API_URL: "http://api.example.com" })).toMatch(
      /^Invalid FLOTILLA_API_URL="http:\/\/api\.example\.com": must be an https URL/,
    );
    // A data directory that is a file: nowhere to write the CA.
    const file = path.join(dir, "plain-file");
    fs.writeFileSync(file, "");
    expect(refusal({ FLOTILLA_TLS: "generate", FLOTILLA_DATA_DIR: file })).toMatch(
      /^Invalid FLOTILLA_TLS="generate": cannot make the certificates in .*plain-file\/tls/,
    );
  });

  it("without TLS settings the API stays plain HTTP", () => {
    const config = loadConfig({ FLOTILLA_DATA_DIR: tmp("plain") });
    expect(config.tls).toBeUndefined();
    expect(config.apiUrl).toBe("http://localhost:8081");
  });
});
