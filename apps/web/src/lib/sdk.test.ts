import { describe, expect, it } from "vitest";
import { CLIENT_ID, withClientId } from "./sdk.ts";

describe("client identification", () => {
  it("identifies the dashboard as app version 31.1.1", () => {
    expect(CLIENT_ID).toBe("flotilla-dashboard/31.1.1");
  });

  it("adds the dashboard to the SDK's X-Balena-Client header once", () => {
    expect(withClientId("balena-sdk/23.2.15")).toBe("balena-sdk/23.2.15 flotilla-dashboard/31.1.1");
    expect(withClientId("balena-sdk/23.2.15 flotilla-dashboard/31.1.1")).toBe(
      "balena-sdk/23.2.15 flotilla-dashboard/31.1.1",
    );
    expect(withClientId(undefined)).toBe("flotilla-dashboard/31.1.1");
  });
});
