import { describe, expect, it } from "vitest";
import { withMessage } from "./supervisor-relay.ts";

describe("a device's refusal relayed to balena's clients", () => {
  it.each([
    [200, { appState: "applied" }, { appState: "applied" }],
    [423, { message: "Updates are locked" }, { message: "Updates are locked" }],
    [400, { error: "Unknown service" }, { error: "Unknown service", message: "Unknown service" }],
    [
      400,
      { Data: null, Error: "Reboot is not allowed" },
      { Data: null, Error: "Reboot is not allowed", message: "Reboot is not allowed" },
    ],
    [500, "Supervisor error", { message: "Supervisor error" }],
    [502, null, { message: "The device answered 502" }],
    [409, { status: "failed" }, { status: "failed", message: "The device answered 409" }],
  ])("%s %j carries a message", (status, body, expected) => {
    expect(withMessage(status, body)).toEqual(expected);
  });
});
