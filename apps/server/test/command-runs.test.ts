import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../src/features/api-keys/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { eventually } from "./support/agent.ts";
import { call, provisioningKeyFor } from "./support/devices.ts";

/**
 * Bulk commands (docs/bulk-commands.md) on real simulated devices: the agent's simulator in this
 * process, speaking the real protocol over cloudlink, running commands in its sandboxed shell.
 */

// The agent project references this one (its tests start servers), so it is loaded at run time.
type SimDevice = { uuid: string; deviceId: number; runtime: { start(): void; stop(): void } };
type Simulator = { devices: SimDevice[]; stop(): Promise<void> };
const agentModule = new URL("../../agent/src/index.ts", import.meta.url).href;
const { startSimulator } = (await import(/* @vite-ignore */ agentModule)) as {
  startSimulator(options: Record<string, unknown>): Promise<Simulator>;
};

type RunDevice = {
  id: number;
  uuid: string;
  name: string;
  state: string;
  exit_code: number | null;
  output: string;
  reason: string | null;
  duration_ms: number | null;
};
type Run = {
  id: number;
  status: string;
  command: string;
  summary: Record<string, number>;
  devices: RunDevice[];
};
type StreamEvent = { event: string; data: Record<string, unknown> };

let t: TestApp;
type TestUser = Awaited<ReturnType<TestApp["factories"]["user"]>>;
let owner: TestUser;
let observer: TestUser;
let stranger: TestUser;
let simulator: Simulator;
let devices: SimDevice[];
let fleetId: number;

const start = (token: string, body: unknown) => call(t, "POST", "/command/v1/runs", token, body);
const getRun = async (id: number, token = owner.token) =>
  (await call(t, "GET", `/command/v1/runs/${id}`, token)).json as Run;
const finished = async (id: number, timeoutMs = 10_000) => {
  await eventually(async () => (await getRun(id)).status !== "running", timeoutMs);
  return getRun(id);
};

/** Reads the run's server-sent events until the summary (or the timeout). */
async function stream(id: number, token = owner.token, timeoutMs = 15_000): Promise<StreamEvent[]> {
  const response = await fetch(`${t.url}/command/v1/runs/${id}/stream`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events: StreamEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (name && data) events.push({ event: name, data: JSON.parse(data) });
      end = buffer.indexOf("\n\n");
    }
  }
  return events;
}

const connected = (device: SimDevice) => t.ctx.devices.relay.isConnectedHere(device.deviceId);

beforeAll(async () => {
  t = await createTestApp();
  owner = await t.factories.user();
  const org = await t.factories.organization({ name: "Exec", admins: [owner.user] });
  const fleet = await t.factories.fleet(org, { name: "exec-fleet" });
  fleetId = fleet.id;
  observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, fleet, "observer");
  stranger = await t.factories.user();
  const otherOrg = await t.factories.organization({ name: "Other", admins: [stranger.user] });
  await t.factories.fleet(otherOrg, { name: "other-fleet" });
  const provisioningKey = await provisioningKeyFor(t, owner.token, fleet.id);
  simulator = await startSimulator({
    apiUrl: t.url,
    provisioningKey,
    fleetId: fleet.id,
    count: 6,
    intervalMs: 300,
    disconnectChance: 0,
    log: () => undefined,
  });
  devices = simulator.devices;
  await eventually(async () => {
    if (!devices.every(connected)) return false;
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM device WHERE belongs_to__application = $1 AND os_version IS NOT NULL`,
      [fleet.id],
    );
    return rows[0]?.n === 6;
  }, 20_000);
}, 40_000);
afterAll(async () => {
  await simulator?.stop();
  await t?.close();
});

describe("running a command on many devices", () => {
  it("runs uname -a on 5 devices: 5 outputs streamed live, exit codes, durations and a summary", async () => {
    const five = devices.slice(0, 5);
    const created = await start(owner.token, { command: "uname -a", devices: five.map((d) => d.uuid) });
    expect(created.status).toBe(201);
    const body = created.json as { id: number; devices: { id: number; uuid: string; state: string }[] };
    expect(body.devices).toHaveLength(5);
    expect(body.devices.every((d) => d.state === "queued")).toBe(true);

    const events = await stream(body.id);
    expect(events[0]?.event).toBe("snapshot");
    const summary = events.at(-1);
    expect(summary?.event).toBe("summary");
    expect(summary?.data).toMatchObject({ status: "finished", summary: { total: 5, succeeded: 5, failed: 0 } });
    // Output and the final state of each device, unless they were over before the stream began;
    // what a device printed before the stream began is in the snapshot, the rest streamed after.
    const snapshot = events[0]?.data as unknown as Run;
    for (const device of five) {
      const before = snapshot.devices.find((d) => d.uuid === device.uuid);
      if (before?.state === "succeeded") continue;
      const output = events.filter((e) => e.event === "output" && e.data.uuid === device.uuid);
      expect((before?.output ?? "") + output.map((e) => e.data.data).join("")).toMatch(
        /^Linux \w+ 6\.1\.\d+ .*aarch64 GNU\/Linux\n$/,
      );
      expect(
        events.some((e) => e.event === "state" && e.data.uuid === device.uuid && e.data.state === "succeeded"),
      ).toBe(true);
    }

    const run = await getRun(body.id);
    expect(run).toMatchObject({ status: "finished", command: "uname -a", summary: { succeeded: 5, total: 5 } });
    for (const device of run.devices) {
      expect(device.output).toBe(`Linux ${device.uuid.slice(0, 7)} 6.1.77 #1 SMP PREEMPT aarch64 GNU/Linux\n`);
      expect(device.exit_code).toBe(0);
      expect(device.duration_ms).toBeGreaterThanOrEqual(0);
    }
  });

  it("reports a failing command's exit code", async () => {
    const created = await start(owner.token, { command: "cat /nope; exit 3", devices: [devices[0]?.deviceId] });
    const run = await finished((created.json as { id: number }).id);
    expect(run.devices[0]).toMatchObject({ state: "failed", exit_code: 3 });
    expect(run.devices[0]?.output).toContain("No such file or directory");
  });

  it("shows an offline device as offline at once (no queue window)", async () => {
    const away = devices[5] as SimDevice;
    away.runtime.stop();
    await eventually(async () => !connected(away));
    const created = await start(owner.token, { command: "uname -a", devices: [devices[0]?.uuid, away.uuid] });
    const answer = created.json as { id: number; devices: { uuid: string; state: string }[] };
    expect(answer.devices.find((d) => d.uuid === away.uuid)?.state).toBe("offline");
    const run = await finished(answer.id);
    expect(run.summary).toMatchObject({ succeeded: 1, offline: 1, total: 2 });
    expect(run.devices.find((d) => d.uuid === away.uuid)?.reason).toBe("The device is offline");
  });

  it("queues an offline device and runs the command when it comes online within the window", async () => {
    const away = devices[5] as SimDevice;
    expect(connected(away)).toBe(false);
    const created = await start(owner.token, { command: "hostname", devices: [away.uuid], queue_window_s: 60 });
    const answer = created.json as { id: number; devices: { state: string }[] };
    expect(answer.devices[0]?.state).toBe("waiting_online");
    expect((await getRun(answer.id)).status).toBe("running");
    away.runtime.start();
    const run = await finished(answer.id, 20_000);
    expect(run.devices[0]).toMatchObject({ state: "succeeded", exit_code: 0, output: `${away.uuid.slice(0, 7)}\n` });
  }, 30_000);

  it("marks a command that outlives its timeout as timed_out", async () => {
    const created = await start(owner.token, {
      command: "echo start; sleep 30",
      devices: [devices[1]?.uuid],
      timeout_s: 1,
    });
    const run = await finished((created.json as { id: number }).id);
    expect(run.devices[0]).toMatchObject({ state: "timed_out", output: "start\n" });
    expect(run.summary).toMatchObject({ timed_out: 1 });
  });

  it("keeps to the concurrency limit", async () => {
    const created = await start(owner.token, {
      command: "sleep 0.2; echo done",
      devices: devices.slice(0, 5).map((d) => d.uuid),
      concurrency: 2,
    });
    const events = await stream((created.json as { id: number }).id);
    // Devices already running when the stream began are in the snapshot.
    const snapshot = events[0]?.data as unknown as Run;
    let running = snapshot.devices.filter((d) => d.state === "running").length;
    let most = running;
    for (const { event, data } of events) {
      if (event !== "state") continue;
      if (data.state === "running") running += 1;
      else if (data.state === "succeeded") running -= 1;
      most = Math.max(most, running);
    }
    expect(most).toBe(2);
    expect(events.at(-1)?.data).toMatchObject({ summary: { succeeded: 5 } });
  });

  it("fails a command for a service the device does not run, with the device's reason", async () => {
    const created = await start(owner.token, {
      command: "true",
      devices: [devices[0]?.uuid],
      target: { service: "nope" },
    });
    const run = await finished((created.json as { id: number }).id);
    expect(run.devices[0]).toMatchObject({ state: "failed", reason: "Service not found: nope" });
  });

  it("cancels a run: running and queued devices end cancelled", async () => {
    const created = await start(owner.token, {
      command: "sleep 30",
      devices: devices.slice(0, 3).map((d) => d.uuid),
      concurrency: 1,
    });
    const id = (created.json as { id: number }).id;
    await eventually(async () => (await getRun(id)).devices.some((d) => d.state === "running"));
    const cancelled = await call(t, "POST", `/command/v1/runs/${id}/cancel`, owner.token);
    expect(cancelled.status).toBe(200);
    const run = await finished(id);
    expect(run.status).toBe("cancelled");
    expect(run.summary).toMatchObject({ cancelled: 3, total: 3 });
    // The device stopped the command too: nothing runs there any more.
    const runtime = devices[0]?.runtime as unknown as { execs: { size: number } };
    await eventually(async () => runtime.execs.size === 0);
  });

  it("runs by fleet and tag filter", async () => {
    const tagged = devices.slice(0, 2);
    for (const device of tagged) {
      await t.db.query(`INSERT INTO device_tag (device, tag_key, value) VALUES ($1, 'role', 'edge')`, [
        device.deviceId,
      ]);
    }
    const fleet = (
      await t.db.query<{ id: number }>(`SELECT belongs_to__application AS id FROM device WHERE id = $1`, [
        tagged[0]?.deviceId,
      ])
    ).rows[0]?.id;
    const created = await start(owner.token, {
      command: "whoami",
      fleet,
      filter: { tag_key: "role", tag_value: "edge" },
    });
    expect(created.status).toBe(201);
    const run = await finished((created.json as { id: number }).id);
    expect(run.devices.map((d) => d.uuid).sort()).toEqual(tagged.map((d) => d.uuid).sort());
    expect(run.devices.every((d) => d.output === "root\n")).toBe(true);
  });
});

describe("who may run commands", () => {
  it("refuses a queued device when its run's creator lost the fleet or the API key used was deleted", async () => {
    const away = devices[5] as SimDevice;
    away.runtime.stop();
    await eventually(async () => !connected(away));
    // A developer starts a run that waits for the offline device, then is removed from the fleet.
    const removed = await t.factories.user();
    await t.factories.fleetMember(removed.user, { id: fleetId }, "developer");
    const first = await start(removed.token, { command: "id", devices: [away.uuid], queue_window_s: 60 });
    expect((first.json as { devices: { state: string }[] }).devices[0]?.state).toBe("waiting_online");
    const firstId = (first.json as { id: number }).id;
    await t.db.query(`DELETE FROM "user_application_membership" WHERE "user" = $1`, [removed.user.id]);
    // Another developer starts one with a personal API key that is deleted before the device returns.
    const keyed = await t.factories.user();
    await t.factories.fleetMember(keyed.user, { id: fleetId }, "developer");
    const key = `exec-key-${Date.now()}`;
    await t.db.query(
      `INSERT INTO "api_key" (key_hash, is_of__actor, role, name) SELECT $1, actor, 'user', 'exec' FROM "user" WHERE id = $2`,
      [hashApiKey(key), keyed.user.id],
    );
    const second = await start(key, { command: "id", devices: [away.uuid], queue_window_s: 60 });
    expect(second.status).toBe(201);
    const secondId = (second.json as { id: number }).id;
    await t.db.query(
      `DELETE FROM "api_key" WHERE name = 'exec' AND is_of__actor = (SELECT actor FROM "user" WHERE id = $1)`,
      [keyed.user.id],
    );

    away.runtime.start();
    await eventually(
      async () => (await getRun(firstId)).status !== "running" && (await getRun(secondId)).status !== "running",
      20_000,
    );
    const [one, two] = [await getRun(firstId), await getRun(secondId)];
    expect(one.devices[0]).toMatchObject({ state: "refused", output: "" });
    expect(one.devices[0]?.reason).toContain("may no longer run commands on this device");
    expect(two.devices[0]).toMatchObject({ state: "refused", output: "" });
    expect(two.devices[0]?.reason).toBe("The API key that started the run was deleted or has expired");
    // The removed creator reads nothing more of their run; the other still reads theirs.
    expect((await call(t, "GET", `/command/v1/runs/${firstId}`, removed.token)).status).toBe(404);
    expect(
      (
        await fetch(`${t.url}/command/v1/runs/${firstId}/stream`, {
          headers: { authorization: `Bearer ${removed.token}` },
        })
      ).status,
    ).toBe(404);
    const list = (await call(t, "GET", "/command/v1/runs", removed.token)).json as { runs: unknown[] };
    expect(list.runs).toEqual([]);
    expect((await call(t, "GET", `/command/v1/runs/${secondId}`, keyed.token)).status).toBe(200);
    await eventually(async () => connected(away));
  }, 40_000);

  it("refuses host commands to a member without device.ssh-host, per device", async () => {
    const created = await start(observer.token, { command: "uname -a", devices: [devices[0]?.uuid, devices[1]?.uuid] });
    expect(created.status).toBe(201);
    const answer = created.json as { id: number; devices: { state: string; reason: string }[] };
    expect(answer.devices.map((d) => d.state)).toEqual(["refused", "refused"]);
    expect(answer.devices[0]?.reason).toContain("device.ssh-host");
    const run = await finished(answer.id, 5000).catch(() => undefined);
    // The observer reads its own run.
    const own = (await call(t, "GET", `/command/v1/runs/${answer.id}`, observer.token)).json as Run;
    expect(own.summary).toMatchObject({ refused: 2, total: 2 });
    expect(run?.status ?? own.status).toBe("finished");
  });

  it("keeps other organizations' devices and runs out of reach", async () => {
    const created = await start(stranger.token, { command: "uname -a", devices: [devices[0]?.uuid] });
    expect(created.status).toBe(404);
    expect(created.text).toContain(devices[0]?.uuid);
    const mine = await start(owner.token, { command: "true", devices: [devices[0]?.uuid] });
    const id = (mine.json as { id: number }).id;
    expect((await call(t, "GET", `/command/v1/runs/${id}`, stranger.token)).status).toBe(404);
    expect((await call(t, "POST", `/command/v1/runs/${id}/cancel`, stranger.token)).status).toBe(404);
    const response = await fetch(`${t.url}/command/v1/runs/${id}/stream`, {
      headers: { authorization: `Bearer ${stranger.token}` },
    });
    expect(response.status).toBe(404);
    const list = (await call(t, "GET", "/command/v1/runs", stranger.token)).json as { runs: unknown[] };
    expect(list.runs).toEqual([]);
    expect((await call(t, "GET", "/command/v1/runs", undefined)).status).toBe(401);
  });

  it("answers bad input with 400 and a message", async () => {
    const uuid = devices[0]?.uuid;
    const cases: [unknown, RegExp][] = [
      [{ devices: [uuid] }, /command/],
      [{ command: "  ", devices: [uuid] }, /command: must not be empty/],
      [{ command: "x".repeat(10_001), devices: [uuid] }, /at most 10000 characters/],
      [{ command: "ls", devices: [uuid], timeout_s: 0 }, /timeout_s: must be at least 1/],
      [{ command: "ls", devices: [uuid], concurrency: 1001 }, /concurrency: must be at most 1000/],
      [{ command: "ls", devices: [uuid], queue_window_s: 86_401 }, /queue_window_s/],
      [{ command: "ls" }, /either devices or a fleet/],
      [{ command: "ls", devices: [uuid], fleet: 1 }, /either devices or a fleet/],
      [{ command: "ls", devices: ["NOT-A-UUID"] }, /devices/],
      [{ command: "ls", devices: [uuid], target: { service: "../x" } }, /target/],
    ];
    for (const [body, message] of cases) {
      const response = await start(owner.token, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.text).toMatch(message);
    }
    expect((await call(t, "GET", "/command/v1/runs/abc", owner.token)).status).toBe(400);
  });
});

describe("the record of runs", () => {
  it("audits every run with its command and results, and lists the caller's runs", async () => {
    const created = await start(owner.token, { command: "echo audited", devices: [devices[2]?.uuid] });
    const id = (created.json as { id: number }).id;
    await finished(id);
    await eventually(async () => {
      const { rows } = await t.db.query(
        `SELECT 1 FROM audit_event WHERE action = 'command_run.finished' AND target_id = $1`,
        [String(id)],
      );
      return rows.length === 1;
    });
    const { rows } = await t.db.query<{ action: string; actor_user: number; details: Record<string, unknown> }>(
      `SELECT action, actor_user, details FROM audit_event WHERE target_type = 'command_run' AND target_id = $1 ORDER BY id`,
      [String(id)],
    );
    expect(rows.map((r) => r.action)).toEqual(["command_run.started", "command_run.finished"]);
    expect(rows[0]).toMatchObject({
      actor_user: owner.user.id,
      details: { command: "echo audited", target: "host", device_count: 1 },
    });
    expect(rows[1]?.details).toMatchObject({ command: "echo audited", summary: { succeeded: 1, total: 1 } });
    const list = (await call(t, "GET", "/command/v1/runs", owner.token)).json as {
      runs: { id: number; created_by_username: string }[];
    };
    expect(list.runs[0]?.id).toBe(id);
    // The dashboard names who started a run.
    expect(list.runs[0]?.created_by_username).toBe(owner.user.username);
    expect((await getRun(id)) as unknown).toMatchObject({
      created_by: owner.user.id,
      created_by_username: owner.user.username,
    });
  });

  it("serves the stream to the dashboard's origin (CORS) and ends a finished run's stream at once", async () => {
    const created = await start(owner.token, { command: "true", devices: [devices[3]?.uuid] });
    const id = (created.json as { id: number }).id;
    await finished(id);
    const response = await fetch(`${t.url}/command/v1/runs/${id}/stream`, {
      headers: { authorization: `Bearer ${owner.token}`, origin: t.config.publicUrl },
      signal: AbortSignal.timeout(5000),
    });
    expect(response.headers.get("access-control-allow-origin")).toBe(t.config.publicUrl);
    const text = await response.text();
    expect(text).toMatch(/^event: snapshot\n/);
    expect(text).toMatch(/event: summary\ndata: .*"succeeded":1/);
  });

  it("finishes runs left running by a server that restarted, their running devices failed", async () => {
    const { rows } = await t.db.query<{ id: number }>(
      `INSERT INTO command_run (organization, created_by, command, target, timeout_s, concurrency, instance)
       SELECT a.organization, $2, 'sleep 100', 'host', 200, 1, 'gone-instance'
         FROM device d JOIN application a ON a.id = d.belongs_to__application WHERE d.id = $1 RETURNING id`,
      [devices[0]?.deviceId, owner.user.id],
    );
    const id = rows[0]?.id as number;
    await t.db.query(
      `INSERT INTO command_run_device (run, device, state) VALUES ($1, $2, 'running'), ($1, $3, 'queued')`,
      [id, devices[0]?.deviceId, devices[1]?.deviceId],
    );
    await t.ctx.commandRuns.start();
    const run = await getRun(id);
    expect(run.status).toBe("finished");
    const states = Object.fromEntries(run.devices.map((d) => [d.id, [d.state, d.reason]]));
    expect(states[devices[0]?.deviceId as number]).toEqual(["failed", "server restarted"]);
    expect(states[devices[1]?.deviceId as number]).toEqual(["cancelled", "server restarted"]);
  });
});
