import { getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solveProofOfWork } from "../src/features/captcha/proof-of-work.ts";
import { createTestApp, type TestApp } from "./harness.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ FLOTILLA_CAPTCHA: "pow" });
});
afterAll(() => t.close());

const captchaResponse = async () => {
  const { challenge } = (await (await fetch(`${t.url}/auth/v1/captcha`)).json()) as { challenge: string };
  return solveProofOfWork(challenge);
};

const register = (body: Record<string, unknown>) =>
  fetch(`${t.url}/user/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("registration (POST /user/register)", () => {
  it("signs up through balena-sdk with the built-in captcha and starts a session", async () => {
    const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
    const token = await sdk.auth.register({
      email: "new@example.com",
      password: "a-good-password",
      "g-recaptcha-response": await captchaResponse(),
    });
    await sdk.auth.loginWithToken(token);
    expect(await sdk.auth.whoami()).toMatchObject({ actorType: "user", email: "new@example.com", username: "new" });
    const { rows } = await t.db.query('SELECT must_be_verified, is_verified FROM "user" WHERE email = $1', [
      "new@example.com",
    ]);
    expect(rows[0]).toEqual({ must_be_verified: true, is_verified: false });
  });

  it("needs a captcha response, and a valid one, used once", async () => {
    expect(await (await register({ email: "a@example.com", password: "a-good-password" })).json()).toEqual({
      code: "bad_request",
      message: "g-recaptcha-response: a captcha response is required",
    });
    const solved = await captchaResponse();
    expect(
      (await register({ email: "b@example.com", password: "a-good-password", "g-recaptcha-response": solved })).status,
    ).toBe(200);
    const replay = await register({
      email: "c@example.com",
      password: "a-good-password",
      "g-recaptcha-response": solved,
    });
    expect(replay.status).toBe(400);
  });

  it.each([
    [{ email: "not-an-email", password: "a-good-password" }, "email: Please enter a valid email address"],
    [{ email: "d@example.com", password: "short" }, "password: Password must be at least 8 characters"],
    [{ email: "d@example.com", password: "x".repeat(65) }, "password: Password must be at most 64 characters"],
    [{ email: "d@example.com" }, "password: Password is required"],
    [
      { email: "d@example.com", password: "a-good-password", username: "sneaky" },
      'The request body has an unknown field: "username".',
    ],
  ])("refuses %j", async (body, message) => {
    const response = await register({ ...body, "g-recaptcha-response": await captchaResponse() });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toBe(message);
    expect((await t.db.query('SELECT 1 FROM "user" WHERE email = $1', ["d@example.com"])).rows).toEqual([]);
  });

  it("refuses an email that is already registered, case-insensitively", async () => {
    await t.factories.user({ email: "taken@example.com" });
    const response = await register({
      email: "TAKEN@example.com",
      password: "a-good-password",
      "g-recaptcha-response": await captchaResponse(),
    });
    expect(response.status).toBe(409);
  });
});

describe("registration with reCAPTCHA", () => {
  it("asks the verification service and follows its answer", async () => {
    // Google's siteverify, played by a local server: it accepts the response "human" only.
    const http = await import("node:http");
    const seen: string[] = [];
    const google = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        const form = new URLSearchParams(body);
        seen.push(`${form.get("secret")}:${form.get("response")}`);
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ success: form.get("response") === "human" }));
      });
    });
    await new Promise<void>((resolve) => google.listen(0, "127.0.0.1", resolve));
    const port = (google.address() as import("node:net").AddressInfo).port;
    const app = await createTestApp({
      FLOTILLA_CAPTCHA: "recaptcha",
      RECAPTCHA_SITE_KEY: "site-key",
      RECAPTCHA_SECRET_KEY: "secret-key",
      RECAPTCHA_VERIFY_URL: `http://127.0.0.1:${port}/siteverify`,
    });
    try {
      expect(await (await fetch(`${app.url}/auth/v1/captcha`)).json()).toEqual({
        kind: "recaptcha",
        siteKey: "site-key",
      });
      const attempt = (response: string) =>
        fetch(`${app.url}/user/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            email: `${response}@example.com`,
            password: "a-good-password",
            "g-recaptcha-response": response,
          }),
        });
      expect((await attempt("robot")).status).toBe(400);
      expect((await attempt("human")).status).toBe(200);
      expect(seen).toEqual(["secret-key:robot", "secret-key:human"]);
    } finally {
      await app.close();
      google.close();
    }
  });
});
