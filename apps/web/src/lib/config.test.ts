import { describe, expect, it } from "vitest";
import { loadRuntimeConfig, parseRuntimeConfig, RuntimeConfigError } from "./config.ts";

const served = {
  apiUrl: "http://localhost:8081",
  publicUrl: "http://localhost:8080",
  appVersion: "31.1.1",
  deviceUrlsBaseDomain: null,
  deviceActionsHost: "actions.example.com",
  statusPageUrl: "https://status.example.com/api/v2/summary.json",
  supportForumUrl: "https://forum.example.com/",
  featureRequestsUrl: "https://forum.example.com/ideas",
  docsSearchUrl: "https://docs.example.com/search?q={query}",
  mapTilesUrl: "https://tiles.example.com/{z}/{x}/{y}.png",
  salesUrl: "mailto:sales@example.com",
  stripePublishableKey: null,
  sshHost: "flotilla.example.com",
  sshPort: 2222,
};

describe("runtime config", () => {
  it("reads what the server serves at /config.json", async () => {
    const config = await loadRuntimeConfig(async (input) => {
      expect(input).toBe("/config.json");
      return Response.json({ ...served, apiUrl: "http://localhost:8081/" });
    });
    const { sshHost, sshPort, ...rest } = served;
    expect(config).toEqual({ ...rest, sshGateway: { host: sshHost, port: sshPort } });
  });

  it("names the SSH gateway only when the server serves a valid host and port", () => {
    expect(parseRuntimeConfig({ ...served, sshHost: null, sshPort: null }).sshGateway).toBeNull();
    expect(parseRuntimeConfig({ apiUrl: served.apiUrl }).sshGateway).toBeNull();
    expect(parseRuntimeConfig({ ...served, sshPort: 0 }).sshGateway).toBeNull();
    expect(parseRuntimeConfig({ ...served, sshHost: "a b; rm" }).sshGateway).toBeNull();
    expect(parseRuntimeConfig({ ...served, sshHost: "[::1]" }).sshGateway).toEqual({ host: "[::1]", port: 2222 });
  });

  it("fails with the status of a failed load", async () => {
    const failed = loadRuntimeConfig(
      async () => new Response("down", { status: 503, statusText: "Service Unavailable" }),
    );
    await expect(failed).rejects.toBeInstanceOf(RuntimeConfigError);
    await expect(failed).rejects.toMatchObject({ statusCode: 503 });
  });

  it("has no status page unless the server names an http(s) URL for it", () => {
    expect(parseRuntimeConfig({ ...served, statusPageUrl: null }).statusPageUrl).toBeNull();
    expect(parseRuntimeConfig({ apiUrl: served.apiUrl }).statusPageUrl).toBeNull();
    expect(parseRuntimeConfig({ ...served, statusPageUrl: "ftp://status.example.com/x" }).statusPageUrl).toBeNull();
  });

  it("reads the support drawer's links: balena's forums from a server that does not say, no docs search without {query}", () => {
    const old = parseRuntimeConfig({ apiUrl: served.apiUrl });
    expect(old.supportForumUrl).toBe("https://forums.balena.io/");
    expect(old.featureRequestsUrl).toBe("https://forums.balena.io/c/product-support/feature-requests/");
    expect(old.docsSearchUrl).toBeNull();
    expect(
      parseRuntimeConfig({ ...served, docsSearchUrl: "https://docs.example.com/search" }).docsSearchUrl,
    ).toBeNull();
    expect(parseRuntimeConfig({ ...served, docsSearchUrl: "javascript:{query}" }).docsSearchUrl).toBeNull();
  });

  it("rejects a config without a usable API URL", () => {
    expect(() => parseRuntimeConfig({ ...served, apiUrl: "javascript:alert(1)" })).toThrow(RuntimeConfigError);
    expect(() => parseRuntimeConfig(null)).toThrow(RuntimeConfigError);
  });

  it("reads the map's tiles: a template, null for none, OpenStreetMap from a server that does not say", () => {
    const base = { apiUrl: "http://localhost:8081" };
    expect(parseRuntimeConfig({ ...base, mapTilesUrl: "http://10.0.0.5/{z}/{x}/{y}.png" }).mapTilesUrl).toBe(
      "http://10.0.0.5/{z}/{x}/{y}.png",
    );
    expect(parseRuntimeConfig({ ...base, mapTilesUrl: null }).mapTilesUrl).toBeNull();
    expect(parseRuntimeConfig({ ...base, mapTilesUrl: "javascript:{z}{x}{y}" }).mapTilesUrl).toBeNull();
    expect(parseRuntimeConfig(base).mapTilesUrl).toBe("https://tile.openstreetmap.org/{z}/{x}/{y}.png");
  });
  it("reads where Contact sales leads: an http(s) or mailto: link, else a mail with no address", () => {
    expect(parseRuntimeConfig({ ...served, salesUrl: "https://example.com/sales" }).salesUrl).toBe(
      "https://example.com/sales",
    );
    expect(parseRuntimeConfig({ ...served, salesUrl: "mailto:sales@example.com" }).salesUrl).toBe(
      "mailto:sales@example.com",
    );
    expect(parseRuntimeConfig({ ...served, salesUrl: "javascript:alert(1)" }).salesUrl).toBe("mailto:");
    expect(parseRuntimeConfig({ ...served, salesUrl: null }).salesUrl).toBe("mailto:");
  });
  it("reads Stripe's publishable key (Stripe takes the payments) or null (the built-in provider)", () => {
    expect(parseRuntimeConfig({ ...served, stripePublishableKey: "pk_live_abc123" }).stripePublishableKey).toBe(
      "pk_live_abc123",
    );
    expect(parseRuntimeConfig({ ...served, stripePublishableKey: "sk_live_abc123" }).stripePublishableKey).toBeNull();
    expect(parseRuntimeConfig(served).stripePublishableKey).toBeNull();
  });
});
