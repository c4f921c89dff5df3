import { describe, expect, it } from "vitest";
import {
  attemptOutcome,
  deliveryState,
  EMPTY_WEBHOOK_FORM,
  fieldErrorOf,
  formatDuration,
  formOf,
  formProblems,
  type Webhook,
  webhookBody,
} from "./model.ts";

const webhook: Webhook = {
  id: 1,
  created_at: "2026-11-25T21:00:00Z",
  organization: 3,
  url: "https://hooks.example.com/x",
  description: "ops",
  events: ["device.offline"],
  fleets: null,
  is_enabled: true,
  consecutive_failures: 0,
  disabled_reason: null,
};

/** The webhooks page's helpers (docs/audit-and-webhooks.md "Webhooks"). */
describe("webhook form", () => {
  it("sends no fleets as every fleet (null) and trims text", () => {
    expect(
      webhookBody({ url: " https://a.example/h ", events: ["device.online"], fleets: [], description: " x " }),
    ).toEqual({ url: "https://a.example/h", events: ["device.online"], fleets: null, description: "x" });
    expect(webhookBody({ ...formOf({ ...webhook, fleets: [4, 5] }) }).fleets).toEqual([4, 5]);
    expect(formOf(webhook)).toEqual({ url: webhook.url, events: ["device.offline"], fleets: [], description: "ops" });
  });

  it("asks for a URL and an event before sending", () => {
    expect(formProblems(EMPTY_WEBHOOK_FORM)).toEqual({ url: "required", events: "events" });
    expect(formProblems({ ...EMPTY_WEBHOOK_FORM, url: "ftp://x", events: ["device.online"] })).toEqual({ url: "url" });
    expect(formProblems(formOf(webhook))).toEqual({});
  });

  it("puts the server's refusal under the field it names, in its words", () => {
    expect(fieldErrorOf("url: 10.0.0.1 is not a public address; webhooks are sent to public hosts only")).toEqual({
      field: "url",
      message: "10.0.0.1 is not a public address; webhooks are sent to public hosts only",
    });
    expect(fieldErrorOf("events.0: must be events among device.online")).toEqual({
      field: "events",
      message: "must be events among device.online",
    });
    expect(fieldErrorOf("fleets: not fleets of this organization: 9")?.field).toBe("fleets");
    expect(fieldErrorOf("An organization has at most 20 webhooks.")).toBeUndefined();
    expect(fieldErrorOf("secret: no")).toBeUndefined();
  });
});

describe("delivery log", () => {
  const attempt = { attempt: 1, at: "2026-11-25T21:00:00Z", error: null, duration_ms: 12 };
  it("tells a retry apart from a queued delivery", () => {
    expect(deliveryState({ status: "pending", log: [] })).toBe("queued");
    expect(deliveryState({ status: "pending", log: [{ ...attempt, status_code: 500 }] })).toBe("retrying");
    expect(deliveryState({ status: "delivered", log: [] })).toBe("delivered");
    expect(deliveryState({ status: "failed", log: [] })).toBe("failed");
  });

  it("shows an attempt's HTTP status, or its error when there was no answer", () => {
    expect(attemptOutcome({ ...attempt, status_code: 500, error: "HTTP 500" })).toEqual({
      ok: false,
      text: "HTTP 500",
    });
    expect(attemptOutcome({ ...attempt, status_code: 204 })).toEqual({ ok: true, text: "HTTP 204" });
    expect(attemptOutcome({ ...attempt, status_code: null, error: "timed out" })).toEqual({
      ok: false,
      text: "timed out",
    });
  });

  it("gives response times a unit", () => {
    expect(formatDuration(87)).toBe("87 ms");
    expect(formatDuration(1234)).toBe("1.2 s");
    expect(formatDuration(12_345)).toBe("12 s");
    expect(formatDuration(null)).toBe("–");
  });
});
