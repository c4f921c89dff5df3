import { describe, expect, it } from "vitest";
import {
  CHUNK_LOAD_TIMEOUT_CODE,
  capErrorText,
  errorText,
  htmlToText,
  isAuthError,
  isNetworkError,
  isUnreportedError,
  statusText,
} from "./errors.ts";

/** Shaped like balena-errors' BalenaRequestError (code on the instance instead of the prototype). */
const requestError = (statusCode: number, body: unknown) =>
  Object.assign(new Error(`Request error: ${String(body)}`), { code: "BalenaRequestError", statusCode, body });

const sdkError = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(code), { code, ...extra });

describe("errorText", () => {
  it("falls back to the generic text when nothing better exists", () => {
    expect(errorText(undefined)).toBe("An error has occurred");
    expect(errorText(null)).toBe("An error has occurred");
    expect(errorText({})).toBe("An error has occurred");
    expect(errorText(new Error(""))).toBe("An error has occurred");
  });

  it("uses the generic fallback for server failures, without their details", () => {
    expect(errorText(requestError(500, "TypeError: cannot read x of undefined"))).toBe(
      "Something went wrong, please try again later.",
    );
    expect(errorText(requestError(503, "Service unavailable."))).toBe("Something went wrong, please try again later.");
  });

  it("shows a failed request's body as Request error: {body}.", () => {
    expect(errorText(requestError(400, "Device name is too long"))).toBe("Request error: Device name is too long.");
    // no doubled full stop when the body is a sentence
    expect(errorText(requestError(403, "You are not allowed to do this."))).toBe(
      "Request error: You are not allowed to do this.",
    );
    expect(errorText(requestError(400, ""))).toBe("An error has occurred");
  });

  it("shows a thrown error's message as Error: {message}.", () => {
    expect(errorText(new Error("Unexpected token in JSON"))).toBe("Error: Unexpected token in JSON.");
    expect(errorText("plain string thrown")).toBe("Error: plain string thrown.");
  });

  it("formats invalid parameter errors", () => {
    expect(errorText(sdkError("BalenaInvalidParameterError", { parameterName: "uuid", suppliedValue: "abc" }))).toBe(
      "Invalid parameter: abc is not valid for uuid.",
    );
    expect(errorText(sdkError("BalenaInvalidParameterError", { parameterName: "id", suppliedValue: 12 }))).toBe(
      "Invalid parameter: 12 is not valid for id.",
    );
  });

  it("says Too Many Requests for 429 answers and the SDK's rate-limit error", () => {
    expect(errorText(requestError(429, "Too Many Requests. Try again later."))).toBe(
      "Too Many Requests. Try again later.",
    );
    expect(errorText(sdkError("BalenaTooManyRequests"))).toBe("Too Many Requests. Try again later.");
  });

  it("uses the catalogue texts of the auth errors", () => {
    expect(errorText(sdkError("BalenaInvalidLoginCredentials"))).toBe("Invalid login credentials.");
    expect(errorText(sdkError("BalenaNotLoggedIn"))).toBe("You have to log in.");
    expect(errorText(sdkError("BalenaExpiredToken"))).toBe("Your authentication token has expired.");
  });

  it("reduces HTML bodies to their error text", () => {
    const nginx =
      "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>";
    expect(errorText(requestError(413, nginx))).toBe("Request error: 413 Request Entity Too Large.");
    expect(errorText(new Error("<p>Bad <b>thing</b> &amp; more</p>"))).toBe("Error: Bad thing & more.");
  });

  it("cuts texts longer than 500 characters to 500", () => {
    const text = errorText(requestError(400, "x".repeat(2000)));
    expect(text).toHaveLength(500);
    expect(text.startsWith("Request error: xxx")).toBe(true);
    expect(errorText(new Error("short"))).toBe("Error: short.");
  });

  it("names chunk load timeouts", () => {
    expect(errorText(sdkError(CHUNK_LOAD_TIMEOUT_CODE))).toBe(
      "Loading part of the dashboard took longer than 2 minutes.",
    );
  });
});

describe("statusText", () => {
  it("is the status code and reason phrase of an HTTP failure", () => {
    expect(statusText(requestError(503, "x"))).toBe("503 Service Unavailable");
    expect(statusText(requestError(429, "x"))).toBe("429 Too Many Requests");
    expect(statusText(requestError(418, "x"))).toBe("418");
  });

  it("is the error's message otherwise", () => {
    expect(statusText(new TypeError("Failed to fetch"))).toBe("Failed to fetch");
    expect(statusText(new Error("<b>boom</b>"))).toBe("boom");
    expect(statusText(undefined)).toBe("An error has occurred");
  });
});

describe("error classification", () => {
  it("recognises network failures", () => {
    expect(isNetworkError(new TypeError("Failed to fetch"))).toBe(true);
    expect(isNetworkError(new Error("network timeout"))).toBe(true);
    expect(isNetworkError(requestError(502, "Bad gateway"))).toBe(false);
    expect(isNetworkError(new Error("boom"))).toBe(false);
  });

  it("recognises session errors", () => {
    expect(isAuthError(sdkError("BalenaNotLoggedIn"))).toBe(true);
    expect(isAuthError(sdkError("BalenaExpiredToken"))).toBe(true);
    expect(isAuthError(requestError(403, "no"))).toBe(false);
  });

  it("does not report not-found, bad credentials, not logged in and network failures", () => {
    expect(isUnreportedError(sdkError("BalenaDeviceNotFound"))).toBe(true);
    expect(isUnreportedError(sdkError("BalenaInvalidLoginCredentials"))).toBe(true);
    expect(isUnreportedError(sdkError("BalenaNotLoggedIn"))).toBe(true);
    expect(isUnreportedError(new TypeError("Failed to fetch"))).toBe(true);
    expect(isUnreportedError(requestError(404, "Resource not found"))).toBe(true);
    expect(isUnreportedError(requestError(400, "bad"))).toBe(false);
  });
});

describe("helpers", () => {
  it("keeps plain text and reduces HTML", () => {
    expect(htmlToText("  plain 1 < 2 text ")).toBe("plain 1 < 2 text");
    expect(htmlToText("<div><script>x()</script>Only <i>this</i></div>")).toBe("Only this");
  });

  it("caps at 500 characters", () => {
    expect(capErrorText("a".repeat(501))).toHaveLength(500);
    expect(capErrorText("a".repeat(500))).toHaveLength(500);
  });
});

describe("errors with a code", () => {
  it("show the server's catalogue text as it is", () => {
    expect(errorText({ statusCode: 401, apiCode: "invalid_password", body: "The password is not correct." })).toBe(
      "The password is not correct.",
    );
    expect(errorText({ statusCode: 400, body: "bad" })).toBe("Request error: bad.");
    // An update-required 400 (spec 1 §8), whether the SDK parsed the body or not.
    expect(errorText({ statusCode: 400, body: { error: "updateRequired" } })).toBe(
      "An update on the device is required",
    );
    expect(errorText({ statusCode: 400, body: '{"error":"updateRequired"}' })).toBe(
      "An update on the device is required",
    );
    // What balena-sdk's BalenaRequestError carries for that answer: the body's error.
    expect(errorText({ statusCode: 400, body: "updateRequired" })).toBe("An update on the device is required");
  });
});

describe("one mapping from API answers to the catalogue's texts", () => {
  /** An SDK request error of a Flotilla answer: the text in the body, the code in a header. */
  const coded = (statusCode: number, code: string, body: unknown) =>
    Object.assign(requestError(statusCode, body), {
      responseHeaders: new Headers({ "x-flotilla-error-code": code }),
    });

  it("shows the spec's text for a known code, never the server's short form or the SDK's prefix", () => {
    expect(errorText(coded(400, "two_factor_code_invalid", "code invalid"))).toBe("Two-factor code invalid.");
    expect(errorText(coded(400, "invitation_invalid", "Invitation invalid or expired"))).toBe(
      "Invitation invalid or expired.",
    );
    expect(errorText({ statusCode: 400, apiCode: "reset_code_expired", body: "reset code expired" })).toBe(
      "Reset code expired.",
    );
    expect(errorText(coded(400, "device_must_be_online", "The device must be online for this action"))).toBe(
      "No online device(s) found.",
    );
  });

  it("never shows a data rule sentence or a serialised object", () => {
    const rule = "It is necessary that each user that is member of a team, is member of the organization of the team";
    expect(errorText(coded(400, "organization_membership_required", rule))).toBe(
      "Only members of the organization can be added: invite the user to the organization first.",
    );
    expect(errorText(requestError(400, rule))).toBe("An error has occurred");
    expect(errorText(coded(400, "bad_request", rule))).toBe("An error has occurred");
    expect(errorText(requestError(400, { some: "object" }))).toBe("An error has occurred");
    expect(errorText(requestError(400, { message: "Name too long" }))).toBe("Request error: Name too long.");
    expect(errorText(new Error("Request error: [object Object]"))).toBe("An error has occurred");
    expect(errorText(new Error("Request error: Name too long"))).toBe("Error: Name too long.");
  });

  it("words the errors the API sends in balena's words with the spec's text and the sent params", () => {
    const balena = (statusCode: number, code: string, body: string, params: Record<string, string>) =>
      Object.assign(requestError(statusCode, body), {
        responseHeaders: new Headers({
          "x-flotilla-error-code": code,
          "x-flotilla-error-params": encodeURIComponent(JSON.stringify(params)),
        }),
      });
    expect(
      errorText(balena(409, "already_used", '"organization" and "app_name" must be unique.', { type: "fleet" })),
    ).toBe("This name is already used by another fleet. Note that the name is case-insensitive");
    const rule =
      'It is necessary that each release that is pinned to a device, has a status that is equal to "success" and belongs to an application1 that the device belongs to.';
    expect(errorText(balena(400, "release_not_selectable", rule, { release: "12" }))).toBe(
      "Only a successful release that is not invalidated can be selected: 12",
    );
    expect(
      errorText(
        balena(400, "fleet_name_invalid", "App name may only contain [a-zA-Z0-9_-].", {
          problem: "The name can only contain alphanumeric characters, hyphens or underscores",
        }),
      ),
    ).toBe("The name can only contain alphanumeric characters, hyphens or underscores");
    // A plain fetch's answer (responseError) carries them as `params`.
    expect(
      errorText({ statusCode: 409, apiCode: "already_used", body: '"name" must be unique.', params: { type: "team" } }),
    ).toBe("This name is already used by another team. Note that the name is case-insensitive");
  });

  it("shows the server's catalogue text for other codes, as it is", () => {
    expect(errorText(coded(409, "invitee_already_invited", "This user has already been invited"))).toBe(
      "This user has already been invited",
    );
    expect(errorText(coded(500, "internal_error", "boom"))).toBe("Something went wrong, please try again later.");
  });

  it("shows the supervisor's 'No online device(s) found' unwrapped", () => {
    expect(errorText(requestError(400, "No online device(s) found"))).toBe("No online device(s) found.");
  });

  it("names the field of a not-null refusal instead of the database rule's words", () => {
    const refused = {
      statusCode: 400,
      body: '"key_hash" must not be null.',
      responseHeaders: new Headers({ "x-flotilla-error-code": "bad_request" }),
    };
    expect(errorText(refused)).toBe("A required value is missing: key hash.");
  });
});
