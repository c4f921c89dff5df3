import fs from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDashboard } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";

/** The dashboard origin over a small stand-in build: SPA routes, assets, security headers. */
const dist = fs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/flotilla-dist-`);
fs.mkdirSync(path.join(dist, "assets"));
fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>Flotilla</title>");
fs.writeFileSync(path.join(dist, "assets", "app-1234.js"), "export {};");

const start = async (env: Record<string, string> = {}) => {
  const config = loadConfig({ FLOTILLA_DATA_DIR: dist, FLOTILLA_WEB_DIST: dist, LOG_LEVEL: "silent", ...env });
  const app = await buildDashboard(config, pino({ level: "silent" }));
  await app.ready();
  return app;
};

let plain: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  plain = await start({ FLOTILLA_CAPTCHA: "off" });
});
afterAll(async () => {
  await plain.close();
  fs.rmSync(dist, { recursive: true, force: true });
});

describe("the dashboard origin", () => {
  it("answers client routes with the app, dots included, and a missing asset with 404", async () => {
    for (const url of [
      "/fleets",
      "/user/verify-email/abc/ann%40example.com",
      "/login/cli/http%3A%2F%2F127.0.0.1%3A8000",
    ]) {
      const response = await plain.inject({ url });
      expect(response.statusCode, url).toBe(200);
      expect(response.body).toContain("<title>Flotilla</title>");
    }
    expect((await plain.inject({ url: "/assets/app-1234.js" })).statusCode).toBe(200);
    expect((await plain.inject({ url: "/assets/gone-9999.js" })).statusCode).toBe(404);
    expect((await plain.inject({ method: "POST", url: "/fleets" })).statusCode).toBe(404);
  });

  it("lets forms post only to itself, the API and a command-line tool on this machine", async () => {
    const csp = String((await plain.inject({ url: "/" })).headers["content-security-policy"]);
    // Exactly these: no scheme source (http:) or other host that would let a token be posted away.
    const formAction = csp.split(";").find((directive) => directive.trim().startsWith("form-action"));
    expect(formAction?.trim()).toBe("form-action 'self' http://localhost:8081 http://localhost:* http://127.0.0.1:*");
    expect(csp).not.toContain("google");
    // Frames: itself and the API (the add-device dialog posts the balenaOS image download into one).
    const frameSrc = csp.split(";").find((directive) => directive.trim().startsWith("frame-src"));
    expect(frameSrc?.trim()).toBe("frame-src 'self' http://localhost:8081");
  });

  it("allows Google's reCAPTCHA script and frame only when the deployment uses it", async () => {
    const app = await start({
      FLOTILLA_CAPTCHA: "recaptcha",
      RECAPTCHA_SITE_KEY: "site",
      RECAPTCHA_SECRET_KEY: "secret",
    });
    const csp = String((await app.inject({ url: "/" })).headers["content-security-policy"]);
    await app.close();
    expect(csp).toMatch(
      /script-src 'self' https:\/\/www\.google\.com\/recaptcha\/ https:\/\/www\.gstatic\.com\/recaptcha\//,
    );
    expect(csp).toMatch(/frame-src 'self' http:\/\/localhost:8081 https:\/\/www\.google\.com\/recaptcha\//);
  });

  it("names the SSH gateway's host and port only when FLOTILLA_SSH_PORT is set", async () => {
    const none = JSON.parse((await plain.inject({ url: "/config.json" })).body);
    expect(none).toMatchObject({ sshHost: null, sshPort: null });
    const byApi = await start({ FLOTILLA_SSH_PORT: "2222", FLOTILLA_API_URL: "https://api.fleet.example.com" });
    expect(JSON.parse((await byApi.inject({ url: "/config.json" })).body)).toMatchObject({
      sshHost: "api.fleet.example.com",
      sshPort: 2222,
    });
    await byApi.close();
    const named = await start({ FLOTILLA_SSH_PORT: "22", FLOTILLA_SSH_HOST: "git.fleet.example.com" });
    expect(JSON.parse((await named.inject({ url: "/config.json" })).body)).toMatchObject({
      sshHost: "git.fleet.example.com",
      sshPort: 22,
    });
    await named.close();
  });

  it("loads Stripe.js, its frames and API, and names the publishable key, only when Stripe takes the payments", async () => {
    expect(String((await plain.inject({ url: "/" })).headers["content-security-policy"])).not.toContain("stripe");
    expect(JSON.parse((await plain.inject({ url: "/config.json" })).body).stripePublishableKey).toBeNull();
    const app = await start({ STRIPE_SECRET_KEY: "sk_test_abc", STRIPE_PUBLISHABLE_KEY: "pk_test_abc" });
    const csp = String((await app.inject({ url: "/" })).headers["content-security-policy"]);
    const served = JSON.parse((await app.inject({ url: "/config.json" })).body);
    await app.close();
    expect(csp).toMatch(/script-src 'self' https:\/\/js\.stripe\.com/);
    expect(csp).toMatch(
      /frame-src 'self' http:\/\/localhost:8081 https:\/\/js\.stripe\.com https:\/\/hooks\.stripe\.com/,
    );
    expect(csp).toMatch(/connect-src [^;]*https:\/\/api\.stripe\.com/);
    expect(served.stripePublishableKey).toBe("pk_test_abc");
  });
});
