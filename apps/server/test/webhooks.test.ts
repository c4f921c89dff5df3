import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHeartbeat } from "../src/features/devices/heartbeat.ts";
import { verifyWebhook } from "../src/features/webhooks/signature.ts";
import {
  deliverDueWebhooks,
  retryDelaySeconds,
  WEBHOOK_UNREACHABLE,
  type WebhookDeps,
} from "../src/features/webhooks/worker.ts";
import { fetchAllowList } from "../src/lib/outbound-fetch.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Webhooks (docs/audit-and-webhooks.md): a receiver on 127.0.0.1, which the test's fetch
 * allow-list permits (FLOTILLA_FETCH_ALLOW), gets signed events through the guarded fetcher.
 */
type Received = { headers: http.IncomingHttpHeaders; body: string };

type DeliveryLog = {
  event: string;
  status: string;
  log: { status_code: number | null; duration_ms: number }[];
};

const received: Received[] = [];
/** Answers to give, in order (then 200). */
const answers: number[] = [];
const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
    response.statusCode = answers.shift() ?? 200;
    response.end("ok");
  });
});

describe("webhook retry delays", () => {
  it("start at 30 s and double up to 2 h; FLOTILLA_WEBHOOK_RETRY_BASE_MS moves the start", () => {
    expect([1, 2, 3].map((attempt) => retryDelaySeconds(attempt))).toEqual([30, 60, 120]);
    expect(retryDelaySeconds(20)).toBe(7200);
    expect([1, 2, 3].map((attempt) => retryDelaySeconds(attempt, 1))).toEqual([1, 2, 4]);
    expect(retryDelaySeconds(30, 1)).toBe(7200);
  });
});

describe("webhooks", () => {
  let t: TestApp;
  let receiverUrl: string;
  let deps: WebhookDeps;
  let admin: Awaited<ReturnType<TestApp["factories"]["user"]>>;
  let member: Awaited<ReturnType<TestApp["factories"]["user"]>>;
  let outsider: Awaited<ReturnType<TestApp["factories"]["user"]>>;
  let org: { id: number; handle: string };
  let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;

  const call = (token: string, method: string, path: string, body?: unknown) =>
    t.app.inject({
      method: method as "GET",
      url: path,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const hooksPath = () => `/webhooks/v1/organizations/${org.id}/webhooks`;

  /** Runs delivery rounds until `done` holds (the app's own worker may take some rounds too). */
  async function deliverUntil(done: () => boolean | Promise<boolean>) {
    for (let round = 0; round < 50; round++) {
      if (await done()) return;
      await deliverDueWebhooks(deps);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the delivery did not happen");
  }

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    t = await createTestApp({ FLOTILLA_FETCH_ALLOW: "127.0.0.1" });
    deps = {
      db: t.db,
      allow: fetchAllowList(["127.0.0.1"]),
      mail: t.ctx.mail,
      publicUrl: t.config.publicUrl,
      log: { warn: () => undefined, info: () => undefined } as unknown as WebhookDeps["log"],
      openSecret: (stored) => t.ctx.webhookSecrets.open(stored),
    };
    admin = await t.factories.user();
    member = await t.factories.user();
    outsider = await t.factories.user();
    org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    await t.factories.organization({ admins: [outsider.user] });
    fleet = await t.factories.fleet(org);
  });
  afterAll(async () => {
    await t?.close();
    receiver.close();
  });

  let hook: { id: number; secret: string };

  it("creates a webhook whose secret is shown once, and sends a signed test event", async () => {
    const created = await call(admin.token, "POST", hooksPath(), {
      url: receiverUrl,
      events: ["device.offline", "release.succeeded"],
      fleets: [fleet.id],
    });
    expect(created.statusCode).toBe(201);
    hook = created.json();
    expect(hook.secret).toMatch(/^whsec_/);
    const listed = await call(admin.token, "GET", hooksPath());
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(hook.secret);
    // Sealed at rest: the database does not hold it in clear.
    const stored = await t.db.query<{ secret: string }>(`SELECT secret FROM "webhook" WHERE id = $1`, [hook.id]);
    expect(stored.rows[0]?.secret).toMatch(/^sealed:v1:/);
    expect(stored.rows[0]?.secret).not.toContain(hook.secret);
    expect(listed.json().webhooks).toHaveLength(1);

    const test = await call(admin.token, "POST", `${hooksPath()}/${hook.id}/test`);
    expect(test.statusCode).toBe(202);
    await deliverUntil(() => received.some((r) => r.headers["flotilla-event"] === "webhook.test"));
    const got = received.find((r) => r.headers["flotilla-event"] === "webhook.test") as Received;
    expect(verifyWebhook(hook.secret, got.body, String(got.headers["flotilla-signature"]))).toBe(true);
    expect(verifyWebhook("whsec_wrong", got.body, String(got.headers["flotilla-signature"]))).toBe(false);
    expect(JSON.parse(got.body)).toMatchObject({ type: "webhook.test", organization: org.id });
  });

  it("gets a signed device.offline event when a device goes offline", async () => {
    const device = await t.factories.device(fleet);
    let now = Date.now();
    const heartbeat = createHeartbeat({ db: t.db, clock: { now: () => now }, sweepMs: 0, lastSeenFlushMs: 0 });
    heartbeat.seen(device.id, 10_000);
    await heartbeat.sweep();
    now += 60_000;
    await heartbeat.sweep();
    now += 60_000;
    await heartbeat.sweep();
    await deliverUntil(() => received.some((r) => r.headers["flotilla-event"] === "device.offline"));
    const got = received.find((r) => r.headers["flotilla-event"] === "device.offline") as Received;
    expect(verifyWebhook(hook.secret, got.body, String(got.headers["flotilla-signature"]))).toBe(true);
    expect(JSON.parse(got.body)).toMatchObject({
      type: "device.offline",
      organization: org.id,
      fleet: fleet.id,
      data: { device: device.uuid, state: "offline" },
    });
    // Not subscribed: no device.online.
    expect(received.some((r) => r.headers["flotilla-event"] === "device.online")).toBe(false);
  });

  it("gets device.status_changed and device.update_failed from a state report, nothing for metrics", async () => {
    const created = await call(admin.token, "POST", hooksPath(), {
      url: receiverUrl,
      events: ["device.status_changed", "device.update_finished", "device.update_failed"],
    });
    expect(created.statusCode).toBe(201);
    const second = created.json() as { id: number; secret: string };
    const device = await t.factories.device(fleet);
    const report = (values: Record<string, unknown>) =>
      t.ctx.devices.reports.record({ id: device.id, fleet: fleet.id }, values as never);
    await report({ status: "Idle", cpu_usage: 10 });
    await t.ctx.devices.reports.flush();
    await report({ cpu_usage: 20 });
    await t.ctx.devices.reports.flush();
    await report({ status: "Updating", update_status: "aborted" });
    await t.ctx.devices.reports.flush();
    const { rows } = await t.db.query<{ event: string; payload: { data: Record<string, unknown> } }>(
      `SELECT event, payload FROM "webhook_delivery" WHERE webhook = $1 ORDER BY id`,
      [second.id],
    );
    expect(rows.map((r) => r.event)).toEqual([
      "device.status_changed",
      "device.status_changed",
      "device.update_failed",
    ]);
    expect(rows[1]?.payload.data).toMatchObject({ device: device.uuid, status: "Updating", previous_status: "Idle" });
    await deliverUntil(() => received.some((r) => r.headers["flotilla-event"] === "device.update_failed"));
    const got = received.find((r) => r.headers["flotilla-event"] === "device.update_failed") as Received;
    expect(verifyWebhook(second.secret, got.body, String(got.headers["flotilla-signature"]))).toBe(true);
    expect((await call(admin.token, "DELETE", `${hooksPath()}/${second.id}`)).statusCode).toBe(204);
  });

  it("names the release a device downloads in device.status_changed, and the one it runs apart", async () => {
    const created = await call(admin.token, "POST", hooksPath(), {
      url: receiverUrl,
      events: ["device.status_changed"],
    });
    const hook = created.json() as { id: number };
    const running = await t.factories.release(fleet);
    const next = await t.factories.release(fleet);
    await t.db.query(`UPDATE "application" SET should_be_running__release = $2 WHERE id = $1`, [fleet.id, next.id]);
    const device = await t.factories.device(fleet);
    await t.db.query(`UPDATE "device" SET is_running__release = $2 WHERE id = $1`, [device.id, running.id]);
    const report = async (values: Record<string, unknown>) => {
      await t.ctx.devices.reports.record({ id: device.id, fleet: fleet.id }, values as never);
      await t.ctx.devices.reports.flush();
    };
    await report({ status: "Idle" });
    await report({ status: "Downloading", update_status: "downloading" });
    const { rows } = await t.db.query<{ payload: { data: Record<string, unknown> } }>(
      `SELECT payload FROM "webhook_delivery" WHERE webhook = $1 ORDER BY id`,
      [hook.id],
    );
    expect(rows.map((r) => r.payload.data)).toMatchObject([
      { status: "Idle", release: running.id, running_release: running.id, target_release: next.id },
      { status: "Downloading", release: next.id, running_release: running.id, target_release: next.id },
    ]);
    expect((await call(admin.token, "DELETE", `${hooksPath()}/${hook.id}`)).statusCode).toBe(204);
  });

  it("retries after a 500, and the delivery log shows both attempts", async () => {
    answers.push(500);
    const release = await t.factories.release(fleet, { status: "running" });
    const patched = await call(admin.token, "PATCH", `/v7/release(${release.id})`, { status: "success" });
    expect(patched.statusCode).toBe(200);
    const deliveryOf = async () => {
      const { rows } = await t.db.query<{ id: number; status: string; attempts: number }>(
        `SELECT id::int AS id, status, attempts FROM "webhook_delivery" WHERE webhook = $1 AND event = 'release.succeeded'`,
        [hook.id],
      );
      return rows[0];
    };
    await deliverUntil(async () => ((await deliveryOf())?.attempts ?? 0) >= 1);
    expect((await deliveryOf())?.status).toBe("pending");
    // The backoff is 30 s: bring the retry forward.
    await t.db.query(`UPDATE "webhook_delivery" SET next_attempt_at = now() WHERE webhook = $1`, [hook.id]);
    await deliverUntil(async () => (await deliveryOf())?.status === "delivered");
    const log = await call(admin.token, "GET", `${hooksPath()}/${hook.id}/deliveries`);
    expect(log.statusCode).toBe(200);
    const entry = (log.json().deliveries as DeliveryLog[]).find((d) => d.event === "release.succeeded");
    expect(entry?.status).toBe("delivered");
    expect(entry?.log.map((a) => a.status_code)).toEqual([500, 200]);
    expect(entry?.log[0]?.duration_ms).toBeGreaterThanOrEqual(0);
    const bodies = received.filter((r) => r.headers["flotilla-event"] === "release.succeeded");
    expect(bodies).toHaveLength(2);
    expect(JSON.parse(bodies[1]?.body ?? "{}")).toMatchObject({ data: { release: release.id, status: "success" } });
  });

  it("disables a webhook after 15 failures in a row and mails the administrators", async () => {
    const created = await call(admin.token, "POST", hooksPath(), { url: receiverUrl, events: ["device.online"] });
    const failing = created.json() as { id: number };
    // One failure for the test event, fifteen for a real one.
    answers.push(...Array.from({ length: 16 }, () => 503));
    expect((await call(admin.token, "POST", `${hooksPath()}/${failing.id}/test`)).statusCode).toBe(202);
    const state = async () =>
      (
        await t.db.query<{ is_enabled: boolean; consecutive_failures: number; disabled_reason: string | null }>(
          `SELECT is_enabled, consecutive_failures, disabled_reason FROM "webhook" WHERE id = $1`,
          [failing.id],
        )
      ).rows[0];
    // A test event's failures do not count: real events do.
    await deliverUntil(async () => {
      const { rows } = await t.db.query<{ attempts: number }>(
        `SELECT attempts FROM "webhook_delivery" WHERE webhook = $1`,
        [failing.id],
      );
      return (rows[0]?.attempts ?? 0) >= 1;
    });
    expect((await state())?.consecutive_failures).toBe(0);
    await t.db.query(`DELETE FROM "webhook_delivery" WHERE webhook = $1`, [failing.id]);
    await t.db.query(
      `INSERT INTO "webhook_delivery" (webhook, event, payload) VALUES ($1, 'device.online', '{"type":"device.online"}')`,
      [failing.id],
    );
    for (let round = 0; round < 40 && (await state())?.is_enabled; round++) {
      await t.db.query(`UPDATE "webhook_delivery" SET next_attempt_at = now() WHERE webhook = $1`, [failing.id]);
      await deliverDueWebhooks(deps);
    }
    expect(await state()).toMatchObject({ is_enabled: false, consecutive_failures: 15 });
    expect((await state())?.disabled_reason).toMatch(/15 delivery attempts in a row failed/);
    const { rows: mails } = await t.db.query<{ recipient: string; subject: string }>(
      `SELECT recipient, subject FROM "outbox_email" WHERE subject LIKE '%webhook%'`,
    );
    expect(mails).toEqual([{ recipient: admin.user.email, subject: expect.stringContaining("was disabled") }]);
    answers.length = 0;
    // Enabling it again starts the count over.
    const enabled = await call(admin.token, "PATCH", `${hooksPath()}/${failing.id}`, { is_enabled: true });
    expect(enabled.json()).toMatchObject({ is_enabled: true, consecutive_failures: 0, disabled_reason: null });
    expect((await call(admin.token, "DELETE", `${hooksPath()}/${failing.id}`)).statusCode).toBe(204);
  });

  it("refuses private addresses: a literal one at creation, a name resolving to one at delivery", async () => {
    const literal = await call(admin.token, "POST", hooksPath(), {
      url: "http://10.0.0.7/hook",
      events: ["device.online"],
    });
    expect(literal.statusCode).toBe(400);
    expect(literal.json().message ?? literal.body).toMatch(/10\.0\.0\.7 is not a public address/);
    // Loopback beyond the allowed 127.0.0.1 is private too.
    const sneaky = await call(admin.token, "POST", hooksPath(), {
      url: receiverUrl.replace("127.0.0.1", "127.0.0.2"),
      events: ["device.online"],
    });
    expect(sneaky.statusCode).toBe(400);
    // A webhook stored before the rule (or pointing at a name) is refused by the guard at delivery.
    const before = received.length;
    const { rows } = await t.db.query<{ id: number }>(
      `INSERT INTO "webhook" (organization, url, secret, events) VALUES ($1, 'http://169.254.169.254/latest', 'x', '{device.online}') RETURNING id`,
      [org.id],
    );
    const id = rows[0]?.id as number;
    expect((await call(admin.token, "POST", `${hooksPath()}/${id}/test`)).statusCode).toBe(202);
    const attemptsOf = async () =>
      (
        await t.db.query<{ error: string | null; status_code: number | null }>(
          `SELECT a.error, a.status_code FROM "webhook_attempt" a JOIN "webhook_delivery" d ON d.id = a.delivery WHERE d.webhook = $1`,
          [id],
        )
      ).rows;
    await deliverUntil(async () => (await attemptsOf()).length > 0);
    const [attempt] = await attemptsOf();
    expect(attempt?.status_code).toBeNull();
    expect(attempt?.error).toBe(WEBHOOK_UNREACHABLE);
    expect(received.length).toBe(before);
    await call(admin.token, "DELETE", `${hooksPath()}/${id}`);
    // A name that does not resolve reads the same: the log is no oracle of internal names.
    const unknown = await t.db.query<{ id: number }>(
      `INSERT INTO "webhook" (organization, url, secret, events) VALUES ($1, 'http://no-such-host.invalid/hook', 'x', '{device.online}') RETURNING id`,
      [org.id],
    );
    const unknownId = unknown.rows[0]?.id as number;
    expect((await call(admin.token, "POST", `${hooksPath()}/${unknownId}/test`)).statusCode).toBe(202);
    const unknownAttempts = async () =>
      (
        await t.db.query<{ error: string | null }>(
          `SELECT a.error FROM "webhook_attempt" a JOIN "webhook_delivery" d ON d.id = a.delivery WHERE d.webhook = $1`,
          [unknownId],
        )
      ).rows;
    await deliverUntil(async () => (await unknownAttempts()).length > 0);
    expect((await unknownAttempts())[0]?.error).toBe(WEBHOOK_UNREACHABLE);
    await call(admin.token, "DELETE", `${hooksPath()}/${unknownId}`);
  });

  it("answers bad input with a clear error", async () => {
    const cases: [unknown, RegExp][] = [
      [{ url: "ftp://example.com", events: ["device.online"] }, /url: must be an http\(s\) URL/],
      [{ url: "https://example.com/h", events: [] }, /events: must name at least one event/],
      [{ url: "https://example.com/h", events: ["device.exploded"] }, /events\.0: must be events among/],
      [
        { url: "https://example.com/h", events: ["device.online"], fleets: [999999] },
        /fleets: not fleets of this organization: 999999/,
      ],
      [{ url: "https://example.com/h", events: ["device.online"], extra: 1 }, /extra|Unrecognized/i],
    ];
    for (const [body, message] of cases) {
      const response = await call(admin.token, "POST", hooksPath(), body);
      expect(response.statusCode).toBe(400);
      expect(response.json().message ?? response.body).toMatch(message);
    }
    expect((await call(admin.token, "PATCH", `${hooksPath()}/99999`, { is_enabled: true })).statusCode).toBe(404);
    expect((await call(admin.token, "PATCH", `${hooksPath()}/abc`, { is_enabled: true })).statusCode).toBe(400);
  });

  it("is for the organization's administrators: a member cannot manage, another organization cannot see", async () => {
    expect((await call(member.token, "GET", hooksPath())).statusCode).toBe(403);
    expect(
      (await call(member.token, "POST", hooksPath(), { url: "https://example.com/h", events: ["device.online"] }))
        .statusCode,
    ).toBe(403);
    expect((await call(member.token, "DELETE", `${hooksPath()}/${hook.id}`)).statusCode).toBe(403);
    expect((await call(outsider.token, "GET", hooksPath())).statusCode).toBe(404);
    expect((await call(outsider.token, "GET", `${hooksPath()}/${hook.id}/deliveries`)).statusCode).toBe(404);
    expect((await call(outsider.token, "POST", `${hooksPath()}/${hook.id}/test`)).statusCode).toBe(404);
  });

  it("updates and deletes, and the audit log records it", async () => {
    const updated = await call(admin.token, "PATCH", `${hooksPath()}/${hook.id}`, {
      events: ["rollout.halted"],
      fleets: null,
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ events: ["rollout.halted"], fleets: null });
    expect((await call(admin.token, "DELETE", `${hooksPath()}/${hook.id}`)).statusCode).toBe(204);
    expect((await call(admin.token, "DELETE", `${hooksPath()}/${hook.id}`)).statusCode).toBe(404);
    const { rows } = await t.db.query<{ action: string }>(
      `SELECT action FROM "audit_event" WHERE target_type = 'webhook' AND target_id = $1 ORDER BY id`,
      [String(hook.id)],
    );
    expect(rows.map((r) => r.action)).toEqual(["webhook.created", "webhook.updated", "webhook.deleted"]);
  });
});
