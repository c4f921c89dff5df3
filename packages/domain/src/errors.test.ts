import { describe, expect, it } from "vitest";
import { errorCatalogue, formatErrorText } from "./errors.ts";

describe("error catalogue", () => {
  it("fills placeholders of the invalid-parameter text (spec 1 §8)", () => {
    expect(
      formatErrorText(errorCatalogue.invalid_parameter.text, {
        suppliedValue: "abc",
        parameterName: "FLOTILLA_API_PORT",
      }),
    ).toBe("Invalid parameter: abc is not valid for FLOTILLA_API_PORT.");
  });

  it("leaves unknown placeholders as they are", () => {
    expect(formatErrorText("Hello {who}")).toBe("Hello {who}");
  });

  it("uses client error statuses for client errors only", () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      const isServerSide =
        code === "internal_error" ||
        code === "service_unavailable" ||
        code === "deploy_config_load_failed" ||
        code === "device_relay_timeout" ||
        // The identity provider could not be reached (discovery, token or user info).
        code === "social_provider_unavailable" ||
        // Features the operator did not configure on this server.
        code === "support_portal_not_configured" ||
        code === "chat_missing_username_hash" ||
        // The device answered but did not start the update: a bad gateway, not the client's fault.
        code === "os_update_not_triggered" ||
        // The device answered a health check report in none of the five states.
        code === "diagnostics_state_invalid" ||
        // The support service (Zendesk) could not take the ticket or the file.
        code === "something_went_wrong";
      expect(entry.status >= 500, code).toBe(isServerSide);
    }
  });
});
