import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ FLOTILLA_PUBLIC_URL: "http://dashboard.test:8080" });
});
afterAll(() => t.close());

describe("API basics", () => {
  it("answers /ping without a token", async () => {
    const response = await fetch(`${t.url}/ping`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("OK");
  });

  it("allows the dashboard origin with the SDK's headers and exposes Retry-After", async () => {
    const response = await fetch(`${t.url}/actor/v1/whoami`, {
      method: "OPTIONS",
      headers: {
        origin: "http://dashboard.test:8080",
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization,x-balena-client,content-type",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://dashboard.test:8080");
    const allowed = response.headers.get("access-control-allow-headers")?.toLowerCase() ?? "";
    for (const header of ["authorization", "content-type", "x-balena-client"]) expect(allowed).toContain(header);

    const get = await fetch(`${t.url}/ping`, { headers: { origin: "http://dashboard.test:8080" } });
    expect(get.headers.get("access-control-expose-headers")).toContain("Retry-After");
    expect(get.headers.get("access-control-expose-headers")).toContain("x-flotilla-error-code");
    // The dashboard words balena-worded errors itself from these params (domain errors.ts).
    expect(get.headers.get("access-control-expose-headers")).toContain("x-flotilla-error-params");
  });

  it("serves the feature flags without a token", async () => {
    const flagged = await createTestApp({ FLOTILLA_FEATURE_FLAGS: "displayApps,newMap" });
    try {
      const response = await fetch(`${flagged.url}/config/v1/feature-flags`);
      expect(await response.json()).toEqual({ flags: { displayApps: true, newMap: true } });
    } finally {
      await flagged.close();
    }
  });

  it("does not allow other origins", async () => {
    const response = await fetch(`${t.url}/ping`, { headers: { origin: "http://evil.test" } });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers unknown routes with a not-found error", async () => {
    const response = await fetch(`${t.url}/no/such/route`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "not_found", message: "Resource not found" });
  });

  it("asks for a token on authenticated routes", async () => {
    const response = await fetch(`${t.url}/actor/v1/whoami`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ code: "not_logged_in", message: "You have to log in." });
  });

  it("answers malformed JSON with a 400, not a 500", async () => {
    const response = await fetch(`${t.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe("bad_request");
  });

  it("refuses bodies over the limit with 413", async () => {
    const response = await fetch(`${t.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "x".repeat(2 * 1024 * 1024), password: "y" }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe("payload_too_large");
  });

  it("sends security headers", async () => {
    const response = await fetch(`${t.url}/ping`);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("server errors", () => {
  it("hide their internals", async () => {
    // A route that fails the way a bug would: the client must learn nothing of it.
    const broken = await createTestApp(
      {},
      {
        routes: (app) =>
          app.get("/explode", { config: { public: true } }, async () => {
            throw new Error("connection string postgres://secret@db leaked");
          }),
      },
    );
    try {
      const response = await broken.app.inject({ method: "GET", url: "/explode" });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({
        code: "internal_error",
        message: "Something went wrong, please try again later.",
      });
      expect(response.body).not.toContain("secret");
    } finally {
      await broken.close();
    }
  });
});

describe("rate limit", () => {
  it("answers 429 with Retry-After and the spec's text once the limit is used up", async () => {
    const limited = await createTestApp({ FLOTILLA_RATE_LIMIT: "3" });
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 4; i++) {
        last = await fetch(`${limited.url}/actor/v1/whoami`);
        statuses.push(last.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await last?.json()).toEqual({ code: "too_many_requests", message: "Too Many Requests. Try again later." });
    } finally {
      await limited.close();
    }
  });
});
