import { describe, expect, it } from "vitest";
import { dashboardLoginUrl, startWebLogin } from "./web-login.ts";

const verify = async (token: string) => {
  if (token !== "good-token") throw new Error("unknown token");
  return "alice";
};

describe("web login callback", () => {
  it("makes the dashboard URL the cli-login page reads (the encoded callback in the path)", () => {
    const callback = "http://127.0.0.1:40123/auth/abc";
    const url = dashboardLoginUrl("http://localhost:8080/", callback);
    expect(url).toBe("http://localhost:8080/login/cli/http%3A%2F%2F127.0.0.1%3A40123%2Fauth%2Fabc");
    expect(decodeURIComponent(url.split("/login/cli/")[1] ?? "")).toBe(callback);
  });

  it("takes the token the page posts as a form, once verified", async () => {
    const login = await startWebLogin({ verify });
    expect(login.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/auth\/[0-9a-f]{32}$/);
    const post = (token: string) =>
      fetch(login.callbackUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token }).toString(),
      });
    const refused = await post("bad-token");
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain("unknown token");
    const accepted = await post("good-token");
    expect(accepted.status).toBe(200);
    expect(await accepted.text()).toContain("logged in as alice");
    await expect(login.token).resolves.toEqual({ token: "good-token", who: "alice" });
  });

  it("never takes a token from a URL, and answers other paths 404", async () => {
    const login = await startWebLogin({ verify });
    const origin = new URL(login.callbackUrl).origin;
    expect((await fetch(`${origin}/auth/guess?token=good-token`)).status).toBe(404);
    const inUrl = await fetch(`${login.callbackUrl}?token=good-token`);
    expect(inUrl.status).toBe(405);
    expect(inUrl.headers.get("allow")).toBe("POST");
    expect((await fetch(login.callbackUrl)).status).toBe(405);
    // A POST whose token is only in the query string carries none.
    const queryOnly = await fetch(`${login.callbackUrl}?token=good-token`, { method: "POST" });
    expect(queryOnly.status).toBe(400);
    let settled = false;
    login.token.then(
      () => {
        settled = true;
      },
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    login.close();
  });

  it("gives up after the timeout", async () => {
    const login = await startWebLogin({ verify, timeoutMs: 50 });
    await expect(login.token).rejects.toThrow(/No login arrived from the browser/);
  });
});
