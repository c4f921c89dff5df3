import crypto from "node:crypto";
import type { TestApp } from "../harness.ts";

/** Devices as the agent makes them: a provisioning key, then POST /device/register with a key of its own. */
export async function provisioningKeyFor(t: TestApp, token: string, fleetId: number): Promise<string> {
  const response = await fetch(`${t.url}/api-key/v2/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ actorType: "application", actorTypeId: fleetId, roles: ["provisioning-api-key"] }),
  });
  if (response.status !== 200) throw new Error(`provisioning key: ${response.status} ${await response.text()}`);
  return (await response.json()) as string;
}

export type TestDevice = { id: number; uuid: string; key: string };

export async function registerDevice(
  t: TestApp,
  provisioningKey: string,
  fleet: { id: number },
  fields: Record<string, unknown> = {},
): Promise<TestDevice> {
  const uuid = crypto.randomBytes(16).toString("hex");
  const key = crypto.randomBytes(20).toString("hex");
  const response = await fetch(`${t.url}/device/register`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${provisioningKey}` },
    body: JSON.stringify({ application: fleet.id, uuid, device_type: "raspberrypi4-64", api_key: key, ...fields }),
  });
  if (response.status !== 201) throw new Error(`register: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { id: number };
  return { id: body.id, uuid, key };
}

/** A request with a bearer token and an optional JSON body; the answer's status, headers and text. */
export async function call(
  t: TestApp,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: response.status,
    headers: response.headers,
    code: response.headers.get("x-flotilla-error-code"),
    text,
    json: json as Record<string, unknown>,
  };
}
