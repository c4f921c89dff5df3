import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/** `POST /download-config` through the real balena-sdk `os.getConfig`, and the agent's use of the answer. */
let t: TestApp;
let owner: BalenaSDK;
let fleet: { id: number; slug: string };
let otherFleet: { id: number; slug: string };

async function sdkFor(email: string, password: string) {
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email, password });
  return sdk;
}

beforeAll(async () => {
  t = await createTestApp();
  const me = await t.factories.user({ email: "owner@example.com", password: "owner-password" });
  const stranger = await t.factories.user();
  const org = await t.factories.organization({ name: "Acme", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "sensors" });
  const otherOrg = await t.factories.organization({ name: "Globex", admins: [stranger.user] });
  otherFleet = await t.factories.fleet(otherOrg, { name: "secret" });
  owner = await sdkFor("owner@example.com", "owner-password");
});
afterAll(() => t.close());

describe("os.getConfig", () => {
  it("answers a configuration with a new provisioning key of the requested name and expiry, which registers a device", async () => {
    const expiry = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const config = (await owner.models.os.getConfig(fleet.slug, {
      version: "6.1.0",
      developmentMode: true,
      provisioningKeyName: "onboarding key",
      provisioningKeyExpiryDate: expiry,
      appUpdatePollInterval: 5,
    })) as Record<string, unknown>;
    expect(config).toMatchObject({
      applicationId: fleet.id,
      fleetSlug: fleet.slug,
      apiEndpoint: t.ctx.config.apiUrl,
      deviceType: expect.any(String),
      developmentMode: true,
      appUpdatePollInterval: 300_000,
      provisioningKeyName: "onboarding key",
      provisioningKeyExpiryDate: expiry,
      version: "6.1.0",
      network: "ethernet",
    });
    expect(config.apiKey).toMatch(/^[A-Za-z0-9]{32}$/);
    // No FLOTILLA_REGISTRY_URL: no registry the device would send its credentials to.
    expect(config).not.toHaveProperty("registryEndpoint");
    // balenaOS: the Supervisor's device API port; no VPN, delta server or private CA to name here.
    expect(config.listenPort).toBe(48484);
    for (const absent of ["vpnEndpoint", "vpnPort", "deltaEndpoint", "balenaRootCA", "logsEndpoint"]) {
      expect(config).not.toHaveProperty(absent);
    }
    const keys = await owner.models.apiKey.getProvisioningApiKeysByApplication(fleet.id);
    const key = keys.find((k) => k.name === "onboarding key");
    expect(key?.expiry_date && new Date(key.expiry_date).toISOString()).toBe(expiry);

    // The key is a real provisioning key of the fleet: a device registers with it.
    const uuid = "0123456789abcdef0123456789abcdef";
    const registered = await fetch(`${t.url}/device/register`, {
      method: "POST",
      headers: { authorization: `Bearer ${config.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        user: config.userId,
        application: config.applicationId,
        device_type: config.deviceType,
        uuid,
        api_key: "device-key-of-at-least-16-chars",
      }),
    });
    expect(registered.status).toBe(201);
  });

  it("names the image registry's host[:port] as registryEndpoint when FLOTILLA_REGISTRY_URL is set", async () => {
    const withRegistry = await createTestApp({ FLOTILLA_REGISTRY_URL: "http://127.0.0.1:5055" });
    try {
      const me = await withRegistry.factories.user();
      const org = await withRegistry.factories.organization({ name: "Initech", admins: [me.user] });
      const ownFleet = await withRegistry.factories.fleet(org, { name: "printers" });
      const answer = await fetch(`${withRegistry.url}/download-config`, {
        method: "POST",
        headers: { authorization: `Bearer ${me.token}`, "content-type": "application/json" },
        body: JSON.stringify({ appId: ownFleet.id, version: "6.1.0" }),
      });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ applicationId: ownFleet.id, registryEndpoint: "127.0.0.1:5055" });
    } finally {
      await withRegistry.close();
    }
  });

  it("hands FLOTILLA_DEVICE_CA to balenaOS as balenaRootCA (the PEM, base64)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-device-ca-"));
    const file = path.join(dir, "ca.pem");
    const pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUXq0=\n-----END CERTIFICATE-----\n";
    fs.writeFileSync(file, pem);
    const withCa = await createTestApp({ FLOTILLA_DEVICE_CA: file });
    try {
      const me = await withCa.factories.user();
      const org = await withCa.factories.organization({ name: "Umbrella", admins: [me.user] });
      const ownFleet = await withCa.factories.fleet(org, { name: "gateways" });
      const answer = await fetch(`${withCa.url}/download-config`, {
        method: "POST",
        headers: { authorization: `Bearer ${me.token}`, "content-type": "application/json" },
        body: JSON.stringify({ appId: ownFleet.id, version: "6.1.0" }),
      });
      expect(answer.status).toBe(200);
      const config = (await answer.json()) as { balenaRootCA: string; listenPort: number };
      expect(Buffer.from(config.balenaRootCA, "base64").toString("utf8")).toBe(pem);
      expect(config.listenPort).toBe(48484);
    } finally {
      await withCa.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses another organization's fleet as not found, and an observer with a named reason", async () => {
    await expect(owner.models.os.getConfig(otherFleet.id, { version: "6.1.0" })).rejects.toMatchObject({
      code: "BalenaApplicationNotFound",
    });
    const direct = await fetch(`${t.url}/download-config`, {
      method: "POST",
      headers: { authorization: `Bearer ${await owner.auth.getToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ appId: otherFleet.id, version: "6.1.0" }),
    });
    expect(direct.status).toBe(404);

    const observer = await t.factories.user({ email: "observer@example.com", password: "observer-password" });
    await t.factories.fleetMember(observer.user, fleet, "observer");
    const observerSdk = await sdkFor("observer@example.com", "observer-password");
    await expect(observerSdk.models.os.getConfig(fleet.id, { version: "6.1.0" })).rejects.toMatchObject({
      statusCode: 403,
      message: expect.stringContaining("not allowed to create provisioning keys"),
    });
  });

  it("answers bad input with 400 naming the field, and no session with 401", async () => {
    const token = await owner.auth.getToken();
    const post = (body: unknown, auth = true) =>
      fetch(`${t.url}/download-config`, {
        method: "POST",
        headers: { ...(auth ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const cases: [unknown, string][] = [
      [{ version: "6.1.0" }, "appId"],
      [{ appId: fleet.id }, "version"],
      [
        { appId: fleet.id, version: "6.1.0", provisioningKeyExpiryDate: "2001-01-01T00:00:00Z" },
        "must not be in the past",
      ],
      // balena's refusal, word for word.
      [{ appId: fleet.id, version: "1.2.0" }, "balenaOS versions <= 1.2.0 are no longer supported, please update"],
      [{ appId: fleet.id, version: "v1.1.5" }, "balenaOS versions <= 1.2.0 are no longer supported, please update"],
      [{ appId: fleet.id, version: "6.1.0", provisioningKeyExpiryDate: "soon" }, "provisioningKeyExpiryDate"],
      [{ appId: fleet.id, version: "6.1.0", network: "carrier-pigeon" }, "network"],
      [{ appId: fleet.id, version: "6.1.0", deviceType: "toaster" }, "unknown device type"],
      [{ appId: fleet.id, version: "6.1.0", deviceType: "intel-nuc" }, "another CPU architecture"],
      ["not an object", "The request body must be an object."],
    ];
    for (const [body, words] of cases) {
      const answer = await post(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(await answer.text()).toContain(words);
    }
    expect((await post({ appId: fleet.id, version: "6.1.0" }, false)).status).toBe(401);
    // An expiry of "now" is accepted, as balena accepts it; 1.2.1 is a version it still serves.
    expect(
      (await post({ appId: fleet.id, version: "1.2.1", provisioningKeyExpiryDate: new Date().toISOString() })).status,
    ).toBe(200);
  });
});
