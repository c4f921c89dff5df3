import crypto from "node:crypto";
import { jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODE_HEADER } from "../src/lib/error-handler.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { client } from "./support/accounts.ts";

// The support portal's JWT sign-in and the chat widget's identity (spec 1 §7, §8).

const PORTAL = "https://support.example.test/access/jwt";
const PORTAL_SECRET = "portal-shared-secret-0123456789";
const CHAT_SECRET = "chat-shared-secret-0123456789";

let configured: TestApp;
let bare: TestApp;

beforeAll(async () => {
  [configured, bare] = await Promise.all([
    createTestApp({
      FLOTILLA_SUPPORT_PORTAL_URL: PORTAL,
      FLOTILLA_SUPPORT_PORTAL_SECRET: PORTAL_SECRET,
      FLOTILLA_CHAT_SECRET: CHAT_SECRET,
    }),
    createTestApp(),
  ]);
});
afterAll(async () => {
  await configured.close();
  await bare.close();
});

describe("support portal handoff", () => {
  it("answers with the portal URL carrying a signed JWT and return_to", async () => {
    const { user, token } = await configured.factories.user({ email: "ann@help.test" });
    await configured.db.query(`UPDATE "user" SET first_name = 'Ann', last_name = 'Lee' WHERE id = $1`, [user.id]);
    const returnTo = "https://support.example.test/hc/requests/new";
    const response = await client(configured).get(`/zendesk/v1/login?return_to=${encodeURIComponent(returnTo)}`, token);
    expect(response.status, response.text).toBe(200);
    const url = new URL(String(response.json.url));
    expect(url.origin + url.pathname).toBe(PORTAL);
    expect(url.searchParams.get("return_to")).toBe(returnTo);
    const { payload, protectedHeader } = await jwtVerify(
      url.searchParams.get("jwt") ?? "",
      new TextEncoder().encode(PORTAL_SECRET),
    );
    expect(protectedHeader.alg).toBe("HS256");
    expect(payload).toMatchObject({ email: "ann@help.test", name: "Ann Lee", external_id: String(user.id) });
    expect(typeof payload.jti).toBe("string");
    expect(Math.abs(Number(payload.iat) - Date.now() / 1000)).toBeLessThan(10);
  });

  it("refuses when not signed in, for an unverified email, a bad return_to, or when not configured", async () => {
    const api = client(configured);
    expect((await api.get("/zendesk/v1/login")).status).toBe(401);
    const { user, token } = await configured.factories.user();
    expect((await api.get("/zendesk/v1/login?return_to=javascript:alert(1)", token)).status).toBe(400);
    await configured.db.query(`UPDATE "user" SET is_verified = false WHERE id = $1`, [user.id]);
    expect((await api.get("/zendesk/v1/login", token)).status).toBe(403);
    const other = await bare.factories.user();
    const missing = await client(bare).get("/zendesk/v1/login", other.token);
    expect(missing.status).toBe(501);
    expect(missing.headers.get(ERROR_CODE_HEADER)).toBe("support_portal_not_configured");
  });
});

describe("chat identity", () => {
  it("answers with the user id, name and the HMAC of the user id", async () => {
    const { user, token } = await configured.factories.user({ email: "bo@help.test" });
    const response = await client(configured).get("/user/v1/intercom", token);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      user_id: String(user.id),
      name: user.username,
      email: "bo@help.test",
      user_hash: crypto.createHmac("sha256", CHAT_SECRET).update(String(user.id)).digest("hex"),
    });
  });

  it('says "Missing username hash" without a chat secret and "Missing user_id" without a user', async () => {
    const { token } = await bare.factories.user();
    const noSecret = await client(bare).get("/user/v1/intercom", token);
    expect(noSecret.status).toBe(501);
    expect(noSecret.json.message).toBe("Missing username hash");
    // A fleet's provisioning key is no user.
    const owner = await configured.factories.user();
    const org = await configured.factories.organization({ admins: [owner.user] });
    const fleet = await configured.factories.fleet(org);
    const key = await client(configured).post(
      "/api-key/v2/",
      { actorType: "application", actorTypeId: fleet.id, roles: ["provisioning-api-key"], name: "provisioning" },
      owner.token,
    );
    expect(key.status, key.text).toBe(200);
    const noUser = await client(configured).get("/user/v1/intercom", JSON.parse(key.text));
    expect(noUser.status).toBe(400);
    expect(noUser.json.message).toBe("Missing user_id");
  });
});
