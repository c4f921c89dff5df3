/**
 * Webhooks (docs/audit-and-webhooks.md): the events an organization may subscribe to, and the
 * limits of a subscription. `webhook.test` is only ever sent by "send test event".
 */
export const WEBHOOK_EVENTS = [
  "device.online",
  "device.offline",
  "device.status_changed",
  "device.update_finished",
  "device.update_failed",
  "release.succeeded",
  "release.failed",
  "rollout.halted",
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number] | "webhook.test";

export const WEBHOOK_LIMITS = {
  urlLength: 2048,
  descriptionLength: 500,
  fleets: 100,
  perOrganization: 20,
} as const;

/** The signature header's name; its value is `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`. */
export const WEBHOOK_SIGNATURE_HEADER = "Flotilla-Signature";
