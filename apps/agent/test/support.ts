// biome-ignore-all lint/style/noRestrictedImports: the agent's integration tests run the real API in-process through the server's own test harness (no mock of our server).
import { createTestApp, type TestApp } from "../../server/test/harness.ts";

export type { TestApp };

/** A real API with a user, an organization (on a paid plan when asked), a fleet and a provisioning key. */
export async function apiWithFleet(
  options: { deviceType?: string; paid?: boolean; env?: Record<string, string> } = {},
) {
  const t = await createTestApp(options.env ?? {});
  const owner = await t.factories.user();
  const org = await t.factories.organization({ admins: [owner.user] });
  if (options.paid) {
    await t.db.query(
      `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
      [org.id],
    );
  }
  const fleet = await t.factories.fleet(org, { deviceType: options.deviceType ?? "raspberrypi4-64" });
  const response = await fetch(`${t.url}/api-key/v2/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${owner.token}` },
    body: JSON.stringify({ actorType: "application", actorTypeId: fleet.id, roles: ["provisioning-api-key"] }),
  });
  if (response.status !== 200) throw new Error(`provisioning key: ${response.status} ${await response.text()}`);
  const provisioningKey = (await response.json()) as string;
  return { t, owner, org, fleet, provisioningKey };
}

/** Polls `check` until it answers a truthy value (or fails after `timeoutMs`). */
export async function eventually<T>(
  check: () => Promise<T> | T,
  timeoutMs = 15_000,
  stepMs = 100,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting; last: ${last instanceof Error ? last.message : String(last)}`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
