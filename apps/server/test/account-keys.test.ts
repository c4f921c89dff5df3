import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODE_HEADER } from "../src/lib/error-handler.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { client, MINUTE, withClockOffset } from "./support/accounts.ts";

let t: TestApp;
let api: ReturnType<typeof client>;

/** A code host played by a local server: /{path} answers what `pages` says. */
const pages = new Map<string, { type?: string; body: string | Buffer; delayMs?: number; status?: number }>();
const codeHost = http.createServer((request, response) => {
  const page = pages.get(request.url ?? "");
  if (!page) {
    response.statusCode = 404;
    response.end("not found");
    return;
  }
  setTimeout(() => {
    response.statusCode = page.status ?? 200;
    response.setHeader("content-type", page.type ?? "text/plain; charset=utf-8");
    response.end(page.body);
  }, page.delayMs ?? 0);
});
let hostUrl = "";

beforeAll(async () => {
  // The code host plays a public one on 127.0.0.1, which only an operator's allowance lets through.
  t = await createTestApp({ FLOTILLA_FETCH_ALLOW: "127.0.0.1" });
  api = client(t);
  await new Promise<void>((resolve) => codeHost.listen(0, "127.0.0.1", resolve));
  hostUrl = `http://127.0.0.1:${(codeHost.address() as AddressInfo).port}`;
});
afterAll(async () => {
  codeHost.closeAllConnections();
  await new Promise((resolve) => codeHost.close(resolve));
  await t.close();
});

const ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGv2c0Q3J6sT0mX8yQ3cK1r9hZQb6mKQ3n9gVt7nVq1k";
const RSA = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7";
const ECDSA = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTY=";

/** A user who administers an organization (as every registered account does). */
async function admin() {
  const made = await t.factories.user();
  await t.factories.organization({ admins: [made.user] });
  return made;
}

describe("SSH key import (POST /user/v1/ssh-keys/import)", () => {
  it("adds the valid keys of the list, skips the ones already saved and ignores other lines", async () => {
    const { user, token } = await t.factories.user();
    await t.db.query(`INSERT INTO "user_public_key" ("user", title, public_key) VALUES ($1, 'laptop', $2)`, [
      user.id,
      `${ED} old-comment`,
    ]);
    pages.set("/ada.keys", { body: `${ED} ada@laptop\n${RSA}\nnot a key\n\n${ECDSA} work\r\n${RSA} duplicate\n` });
    const response = await api.post("/user/v1/ssh-keys/import", { url: `${hostUrl}/ada.keys` }, token);
    expect([response.status, response.json]).toEqual([200, { added: 2, skipped: 2, invalid: 1 }]);
    const { rows } = await t.db.query<{ title: string; public_key: string }>(
      'SELECT title, public_key FROM "user_public_key" WHERE "user" = $1 ORDER BY id',
      [user.id],
    );
    expect(rows).toEqual([
      { title: "laptop", public_key: `${ED} old-comment` },
      { title: "127.0.0.1 key 1", public_key: RSA },
      { title: "work", public_key: `${ECDSA} work` },
    ]);
    // Everything already saved: nothing added, all skipped.
    const again = await api.post("/user/v1/ssh-keys/import", { url: `${hostUrl}/ada.keys` }, token);
    expect(again.json).toEqual({ added: 0, skipped: 4, invalid: 1 });
  });

  it.each([
    [{}, "url: URL is required"],
    [{ url: "ftp://example.com/keys" }, "url: Please enter a valid http(s) URL"],
    [{ url: "not a url" }, "url: Please enter a valid http(s) URL"],
  ])("refuses %j", async (body, message) => {
    const { token } = await t.factories.user();
    const response = await api.post("/user/v1/ssh-keys/import", body, token);
    expect([response.status, response.json]).toEqual([400, { code: "bad_request", message }]);
  });

  it("answers 400 for a list without valid keys, a failing host, HTML, more than 100 kB, or a slow host", async () => {
    const { token } = await t.factories.user();
    pages.set("/none.keys", { body: "nothing here\n" });
    pages.set("/html.keys", { body: `${ED}\n`, type: "text/html" });
    pages.set("/big.keys", { body: `${`${RSA}\n`.repeat(3000)}` });
    pages.set("/slow.keys", { body: `${ED}\n`, delayMs: 6000 });
    const cases: [string, string][] = [
      ["/none.keys", "No SSH public key was found at this URL."],
      // Every failure to fetch reads the same (the server is no port scanner); the log has the detail.
      ["/missing.keys", "The key list could not be fetched from this URL."],
      ["/html.keys", "The key list could not be fetched from this URL."],
      ["/big.keys", "The key list could not be fetched from this URL."],
      ["/slow.keys", "The key list could not be fetched from this URL."],
    ];
    for (const [path, message] of cases) {
      const response = await api.post("/user/v1/ssh-keys/import", { url: `${hostUrl}${path}` }, token);
      expect([response.status, response.json], path).toEqual([400, { code: "bad_request", message }]);
    }
  }, 15_000);
});

describe("SSH keys need a fresh sign-in (security review 3)", () => {
  it("refuses to add one for a sign-in older than 20 minutes or an API key, until re-authenticated", async () => {
    const made = await admin();
    const old = await withClockOffset(-21 * MINUTE, () => t.ctx.tokens.start(made.user));
    const apiKey = JSON.parse((await api.post("/api-key/user/full", { name: "ssh-check" }, made.token)).text) as string;
    const key = { title: "laptop", public_key: `${ED} ada@laptop`, user: made.user.id };
    pages.set("/fresh.keys", { body: `${ED} ada@laptop\n` });
    for (const stale of [old, apiKey]) {
      const added = await api.post("/v7/user__has__public_key", key, stale);
      expect([added.status, added.headers.get(ERROR_CODE_HEADER)]).toEqual([403, "auth_expired"]);
      const imported = await api.post("/user/v1/ssh-keys/import", { url: `${hostUrl}/fresh.keys` }, stale);
      expect([imported.status, imported.json.code]).toEqual([403, "auth_expired"]);
    }
    const { rows } = await t.db.query('SELECT id FROM "user_public_key" WHERE "user" = $1', [made.user.id]);
    expect(rows).toEqual([]);
    // The password again (the dashboard's re-authentication) makes the session fresh.
    const fresh = await api.post("/user/v1/refresh-token", { password: made.password }, old);
    expect(fresh.status).toBe(200);
    expect((await api.post("/v7/user__has__public_key", key, fresh.text)).status).toBe(201);
    // Removing a key takes no re-authentication (as revoking an API key does not).
    const [added] = (await api.get("/v7/user__has__public_key?$select=id", old)).json.d as { id: number }[];
    expect((await api.del(`/v7/user__has__public_key(${added?.id})`, old)).status).toBe(200);
  });
});

describe("personal API keys (POST /api-key/user/full)", () => {
  it("needs a name; the expiry is a future date, or null or left out for never", async () => {
    const { token } = await admin();
    const post = (body: unknown) => api.post("/api-key/user/full", body, token);
    expect((await post({ expiryDate: null })).json).toEqual({ code: "bad_request", message: "name: is required" });
    expect((await post({ name: "  ", expiryDate: null })).json).toEqual({
      code: "bad_request",
      message: "name: is required",
    });
    // Without an expiry over the API: never (balena's behaviour; the dashboard still asks for the choice).
    const unexpiring = await post({ name: "ci" });
    expect(unexpiring.status).toBe(200);
    const { rows } = await t.db.query<{ expiry_date: Date | null }>(
      `SELECT expiry_date FROM "api_key" WHERE name = 'ci' AND role = 'user'`,
    );
    expect(rows).toEqual([{ expiry_date: null }]);
    expect((await post({ name: "ci", expiryDate: "soon" })).json).toEqual({
      code: "bad_request",
      message: "expiryDate: must be a date in the future, or null for never",
    });
    expect((await post({ name: "ci", expiryDate: new Date(Date.now() - 60_000).toISOString() })).json).toEqual({
      code: "bad_request",
      message: "expiryDate: must be in the future",
    });
    for (const days of [1, 7, 30, 90]) {
      const expiryDate = new Date(Date.now() + days * 86_400_000).toISOString();
      expect((await post({ name: `${days} days`, expiryDate })).status).toBe(200);
    }
    expect((await post({ name: "forever", expiryDate: null })).status).toBe(200);
  });

  it("needs the administrator role of an organization", async () => {
    const { token } = await t.factories.user();
    const response = await api.post("/api-key/user/full", { name: "ci", expiryDate: null }, token);
    expect([response.status, response.json?.message]).toEqual([
      403,
      "Creating API keys needs the administrator role in an organization.",
    ]);
  });

  it("is refused to accounts that sign in through SAML only", async () => {
    const { user, token } = await admin();
    await t.db.query('UPDATE "user" SET password_hash = NULL WHERE id = $1', [user.id]);
    await t.db.query(
      `INSERT INTO "identity_provider" (sso_identifier, entry_point, issuer, certificate) VALUES ('acme', 'https://idp', 'i', 'c')`,
    );
    await t.db.query(
      `INSERT INTO "saml_account" (belongs_to__user, was_generated_by__identity_provider, remote_id)
       SELECT $1, id, 'remote' FROM "identity_provider" WHERE sso_identifier = 'acme'`,
      [user.id],
    );
    const response = await api.post("/api-key/user/full", { name: "ci", expiryDate: null }, token);
    expect([response.status, response.json?.message]).toEqual([
      403,
      "Accounts that sign in through SAML cannot create API keys.",
    ]);
  });
});

describe("login throttling", () => {
  it("answers 429 with Retry-After after 20 failed logins from one address, whatever the accounts", async () => {
    const own = await createTestApp();
    try {
      const c = client(own);
      const { user, password } = await own.factories.user();
      for (let i = 0; i < 20; i++) {
        expect(
          (await c.post("/login_", { username: `nobody${i}@example.com`, password: "wrong-password" })).status,
        ).toBe(401);
      }
      const limited = await c.post("/login_", { username: user.email, password });
      expect([limited.status, limited.json?.message]).toEqual([
        429,
        "Too many failed logins from your address. Try again later. Try again in 15 minutes.",
      ]);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(800);
    } finally {
      await own.close();
    }
  }, 20_000);
});
