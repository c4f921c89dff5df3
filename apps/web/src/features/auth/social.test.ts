import { describe, expect, it } from "vitest";
import { AccountApiError } from "./api.ts";
import { takeReturnUrl } from "./navigation.ts";
import { deniedRedirect, redirectHost } from "./oauth.ts";
import {
  fetchSocialProviders,
  newClientState,
  prepareSocialSignIn,
  SOCIAL_RETURN_KEY,
  socialCallbackErrorText,
  socialCallbackQuery,
  socialErrorText,
  takeClientState,
} from "./social.ts";
import { memoryStorage } from "./test-support.ts";

const answer = (body: unknown, status = 200) =>
  (async () => new Response(JSON.stringify(body), { status })) as unknown as typeof fetch;

describe("social sign-in start", () => {
  it("makes a random client_state of 32 URL-safe characters (the API takes 16–200)", () => {
    const a = newClientState();
    expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(newClientState()).not.toBe(a);
  });

  it("keeps the client_state and the return page in this tab, and points the button at the API", () => {
    const storage = memoryStorage();
    const url = new URL(prepareSocialSignIn("http://api.test", "acme", "/fleets/3", storage));
    expect(url.origin + url.pathname).toBe("http://api.test/auth/acme");
    const clientState = url.searchParams.get("client_state");
    expect(clientState).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(takeClientState(storage)).toBe(clientState);
    // Read once: the flow it belongs to is spent.
    expect(takeClientState(storage)).toBeUndefined();
    expect(takeReturnUrl(SOCIAL_RETURN_KEY, storage)).toBe("/fleets/3");
  });

  it("lists the configured providers; a failure or an odd answer is no buttons", async () => {
    expect(
      await fetchSocialProviders("http://api.test", answer([{ slug: "acme", name: "Acme ID" }, { x: 1 }])),
    ).toEqual([{ slug: "acme", name: "Acme ID" }]);
    expect(await fetchSocialProviders("http://api.test", answer([], 200))).toEqual([]);
    expect(await fetchSocialProviders("http://api.test", answer({ message: "x" }, 500))).toEqual([]);
    const offline = (async () => {
      throw new TypeError("Failed to fetch");
    }) as unknown as typeof fetch;
    expect(await fetchSocialProviders("http://api.test", offline)).toEqual([]);
  });

  it("says a login page's social_error in words, with the provider's name", () => {
    expect(socialErrorText("social_state_mismatch", "Acme ID")).toBe(
      "This sign-in with Acme ID was not started from this browser. Please start it again.",
    );
    expect(socialErrorText("social_provider_unavailable", "Acme ID")).toBe(
      "Acme ID could not be reached. Please try again later.",
    );
    expect(socialErrorText("weird_thing", "acme")).toBe("Signing in with acme failed (weird_thing). Please try again.");
  });
});

describe("social sign-in callback", () => {
  it("passes the provider's query on as it came, with this tab's client_state", () => {
    const query = new URLSearchParams(socialCallbackQuery("?code=abc&state=s1&iss=http%3A%2F%2Fidp", "cs-123"));
    expect([...query]).toEqual([
      ["code", "abc"],
      ["state", "s1"],
      ["iss", "http://idp"],
      ["client_state", "cs-123"],
    ]);
    // A client_state in the URL is never the one sent.
    expect(new URLSearchParams(socialCallbackQuery("state=s&client_state=evil", undefined)).has("client_state")).toBe(
      false,
    );
  });

  it("shows the API's own words for the social codes (provider and email named), even a 502", () => {
    const unverified = new AccountApiError(
      403,
      "Acme ID has not verified your email address ann@acme.test. Verify it there first, then sign in again.",
      "social_email_unverified",
    );
    expect(socialCallbackErrorText(unverified)).toContain("ann@acme.test");
    const down = new AccountApiError(
      502,
      "Acme ID could not be reached. Please try again later.",
      "social_provider_unavailable",
    );
    expect(socialCallbackErrorText(down)).toBe("Acme ID could not be reached. Please try again later.");
    expect(socialCallbackErrorText(new AccountApiError(500, "boom", "internal_error"))).toBe(
      "Something went wrong, please try again later.",
    );
  });
});

describe("OAuth authorization", () => {
  it("names the host the application sends the browser to", () => {
    expect(redirectHost("https://stats.example.com/callback?x=1")).toBe("stats.example.com");
    expect(redirectHost("http://127.0.0.1:9000/cb")).toBe("127.0.0.1:9000");
    expect(redirectHost("not a url")).toBe("not a url");
  });

  it("denies by sending the browser back to the application with access_denied and its state", () => {
    const url = new URL(deniedRedirect("https://stats.example.com/callback?keep=1", "xyz"));
    expect(url.origin + url.pathname).toBe("https://stats.example.com/callback");
    expect(Object.fromEntries(url.searchParams)).toEqual({ keep: "1", error: "access_denied", state: "xyz" });
    expect(new URL(deniedRedirect("https://a.example/cb", undefined)).searchParams.has("state")).toBe(false);
  });
});
