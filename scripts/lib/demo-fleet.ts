// What the device benchmarks (bench-reconnect, bench-scale, bench-two-instances) share: JSON calls
// to the API, and the demo fleet made ready for thousands of simulated devices.
import pg from "pg";
import { DEMO_EMAIL, DEMO_PASSWORD } from "../../e2e/support/flotilla.ts";

export type Api = <T>(method: string, url: string, token: string | undefined, body?: unknown) => Promise<T>;

/** Calls the API at `base` with a JSON body; answers the JSON, or the text (/login_ answers a bare token). */
export function apiAt(base: string): Api {
  return async <T>(method: string, url: string, token: string | undefined, body?: unknown) => {
    const response = await fetch(`${base}${url}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
    try {
      return JSON.parse(text) as T;
    } catch {
      return text as T;
    }
  };
}

/**
 * Gives the demo organization a paid plan (a free one takes 10 devices), signs the demo user in
 * and makes a provisioning key named `keyName` for the demo fleet.
 */
export async function prepareDemoFleet(databaseUrl: string, call: Api, keyName: string) {
  const database = new pg.Client({ connectionString: databaseUrl });
  await database.connect();
  try {
    await database.query(
      `INSERT INTO "subscription" (is_for__organization, is_for__plan)
       SELECT o.id, p.id FROM "organization" o, "plan" p WHERE o.handle = 'demo' AND p.billing_code <> 'free' LIMIT 1`,
    );
  } finally {
    await database.end();
  }
  const token = await call<string>("POST", "/login_", undefined, { username: DEMO_EMAIL, password: DEMO_PASSWORD });
  const [fleet] = (
    await call<{ d: { id: number }[] }>("GET", "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'", token)
  ).d;
  if (!fleet) throw new Error("the demo fleet is missing");
  const key = await call<string>("POST", "/api-key/v2/", token, {
    actorType: "application",
    actorTypeId: fleet.id,
    roles: ["provisioning-api-key"],
    name: keyName,
  });
  return { token, fleetId: fleet.id, key };
}
