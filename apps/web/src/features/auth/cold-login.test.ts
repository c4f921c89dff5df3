import { afterEach, describe, expect, it, vi } from "vitest";
import { opensPlainLogin } from "./cold-login.ts";

afterEach(() => vi.unstubAllGlobals());

function storage(values: Record<string, string>) {
  vi.stubGlobal("localStorage", { getItem: (key: string) => values[key] ?? null });
}

describe("opensPlainLogin", () => {
  const quiet = { statusPageUrl: null };

  it("opens the plain login page for /login without a stored session", () => {
    storage({});
    expect(opensPlainLogin({ pathname: "/login" }, quiet, false)).toBe(true);
    expect(opensPlainLogin({ pathname: "/login/" }, quiet, false)).toBe(true);
    expect(opensPlainLogin({ pathname: "/login/two-factor" }, quiet, false)).toBe(false);
    expect(opensPlainLogin({ pathname: "/fleets" }, quiet, false)).toBe(false);
  });

  it("leaves to the app a signed-in visitor and what only the app shows", () => {
    storage({ "balena-token": "h.p.s" });
    expect(opensPlainLogin({ pathname: "/login" }, quiet, false)).toBe(false);
    storage({});
    expect(opensPlainLogin({ pathname: "/login" }, quiet, true)).toBe(false);
    expect(
      opensPlainLogin({ pathname: "/login" }, { statusPageUrl: "https://status.example/summary.json" }, false),
    ).toBe(false);
    storage({ "flotilla.changelogVersion": JSON.stringify("30.4.0") });
    expect(opensPlainLogin({ pathname: "/login" }, quiet, false)).toBe(false);
  });
});
