import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_EMAIL, DEMO_PASSWORD, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";

const SERVER_BIN = path.resolve(import.meta.dirname, "../../apps/server/bin/flotilla-server.mjs");

let running: RunningFlotilla[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.kill()));
  running = [];
});

async function boot(...args: Parameters<typeof startFlotilla>) {
  const flotilla = await startFlotilla(...args);
  running.push(flotilla);
  return flotilla;
}

const login = (apiUrl: string) =>
  fetch(`${apiUrl}/login_`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: DEMO_EMAIL, password: DEMO_PASSWORD }),
  });

describe("the server process", () => {
  it.each([
    ["FLOTILLA_API_PORT", "abc", 'flotilla: Invalid FLOTILLA_API_PORT="abc": must be a port number'],
    [
      "DATABASE_URL",
      "nonsense://",
      'flotilla: Invalid DATABASE_URL="nonsense://": must be a postgres:// or postgresql:// URL',
    ],
  ])("exits non-zero with one line naming %s when it is bad", (name, value, line) => {
    const result = spawnSync(process.execPath, [SERVER_BIN], {
      env: { PATH: process.env.PATH, [name]: value },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(line);
    expect(result.stdout).toBe("");
  });

  it("serves the dashboard and /ping, and reports its start-up time", async () => {
    const flotilla = await boot();
    expect(await (await fetch(`${flotilla.apiUrl}/ping`)).text()).toBe("OK");
    const page = await fetch(`${flotilla.dashboardUrl}/fleets`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<div id="root">');
    expect(page.headers.get("cache-control")).toBe("no-cache");
    // Hashed assets are cached for a year; a missing one is a real 404, not the SPA page.
    const asset = html.match(/src="(\/assets\/[^"]+\.js)"/)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${flotilla.dashboardUrl}${asset}`);
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await fetch(`${flotilla.dashboardUrl}/assets/gone-1234.js`)).status).toBe(404);
    // The data API answers in the real process (module loading differs from the test runner's).
    const token = await (await login(flotilla.apiUrl)).text();
    const deviceTypes = await fetch(
      `${flotilla.apiUrl}/v7/device_type?$select=slug&$filter=slug eq 'raspberrypi4-64'`,
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    expect(await deviceTypes.json()).toEqual({ d: [{ slug: "raspberrypi4-64" }] });
    const runtime = await (await fetch(`${flotilla.dashboardUrl}/config.json`)).json();
    expect(runtime).toMatchObject({ apiUrl: flotilla.apiUrl, appVersion: "31.1.1" });
    expect(flotilla.output()).toMatch(/Flotilla ready in \d+\.\d\d s/);
  });

  it("drains and exits 0 on SIGTERM", async () => {
    const flotilla = await boot();
    expect(await flotilla.stop()).toBe(0);
    expect(flotilla.output()).toContain("stopped");
  });

  it("loses no committed data when killed mid-request", async () => {
    const first = await boot();
    // Sessions are committed writes: start many logins (under the login rate limit) and kill
    // the server as soon as the first one is acknowledged, while the others are in flight.
    const attempts = 25;
    let firstAcknowledged: () => void = () => undefined;
    const acknowledged = new Promise<void>((resolve) => {
      firstAcknowledged = resolve;
    });
    const logins = Array.from({ length: attempts }, () =>
      login(first.apiUrl).then(
        async (response) => {
          const token = response.ok ? await response.text() : undefined;
          if (token) firstAcknowledged();
          return token;
        },
        () => undefined,
      ),
    );
    await acknowledged;
    await first.kill();
    const tokens = (await Promise.all(logins)).filter((t): t is string => t !== undefined);
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.length).toBeLessThan(attempts); // the kill did land mid-way

    const second = await boot({}, first);
    for (const token of tokens) {
      const whoami = await fetch(`${second.apiUrl}/actor/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
      expect(whoami.status).toBe(200);
    }
  });
});
