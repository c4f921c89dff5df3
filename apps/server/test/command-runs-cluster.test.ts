import { describe, expect, it } from "vitest";
import { createFactories } from "./factories.ts";
import type { TestApp } from "./harness.ts";
import { eventually } from "./support/agent.ts";
import { clusterUnreachable, type Instance, useTwoInstances } from "./support/cluster.ts";
import { call, provisioningKeyFor } from "./support/devices.ts";

/**
 * Bulk commands across two API instances (docs/bulk-commands.md): the run is created on A, the
 * devices' cloudlink sockets are on B, and the stream is read on B; a device waiting to come
 * online connects to B. Runs in CI (DATABASE_URL set); skipped only when no PostgreSQL or Redis
 * answers here.
 */
type SimDevice = { uuid: string; deviceId: number; runtime: { start(): void; stop(): void } };
type Simulator = { devices: SimDevice[]; stop(): Promise<void> };
const agentModule = new URL("../../agent/src/index.ts", import.meta.url).href;
const { startSimulator } = (await import(/* @vite-ignore */ agentModule)) as {
  startSimulator(options: Record<string, unknown>): Promise<Simulator>;
};

const unreachable = await clusterUnreachable();
if (unreachable) console.warn(`command-runs-cluster: skipped, ${unreachable}`);

async function events(url: string, id: number, token: string) {
  const response = await fetch(`${url}/command/v1/runs/${id}/stream`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(15_000),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split("\n\n")
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)?.[1] }))
    .filter((e): e is { event: string; data: string } => e.event !== undefined && e.data !== undefined)
    .map((e) => ({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> }));
}

describe.skipIf(unreachable !== undefined)("bulk commands on two API instances", () => {
  const instances = useTwoInstances("command_runs");

  it("runs from A on devices whose sockets are on B, streams on B, and starts a queued device when it connects to B", async () => {
    const [a, b] = instances as [Instance, Instance];
    const factories = createFactories(a.db.orm);
    const owner = await factories.user();
    const token = await a.ctx.tokens.start(owner);
    const org = await factories.organization({ name: "ClusterExec", admins: [owner] });
    const fleet = await factories.fleet(org, { name: "cluster-exec" });
    const asA = { url: a.url } as TestApp;
    const simulator = await startSimulator({
      apiUrl: b.url,
      provisioningKey: await provisioningKeyFor(asA, token, fleet.id),
      fleetId: fleet.id,
      count: 3,
      intervalMs: 300,
      disconnectChance: 0,
      log: () => undefined,
    });
    try {
      const devices = simulator.devices;
      await eventually(async () => {
        if (!devices.every((d) => b.ctx.devices.relay.isConnectedHere(d.deviceId))) return false;
        const { rows } = await a.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM device WHERE belongs_to__application = $1 AND os_version IS NOT NULL`,
          [fleet.id],
        );
        return rows[0]?.n === 3;
      }, 20_000);
      expect(devices.some((d) => a.ctx.devices.relay.isConnectedHere(d.deviceId))).toBe(false);

      const created = await call(asA, "POST", "/command/v1/runs", token, { command: "uname -a", fleet: fleet.id });
      expect(created.status).toBe(201);
      const id = (created.json as { id: number }).id;
      const streamed = await events(b.url, id, token);
      expect(streamed.at(-1)).toMatchObject({ event: "summary", data: { summary: { succeeded: 3, total: 3 } } });
      const run = (await call(asA, "GET", `/command/v1/runs/${id}`, token)).json as {
        devices: { uuid: string; output: string }[];
      };
      for (const device of run.devices) expect(device.output).toMatch(new RegExp(`^Linux ${device.uuid.slice(0, 7)} `));

      // A device offline when the run starts on A begins when it connects to B.
      const away = devices[0] as SimDevice;
      away.runtime.stop();
      await eventually(async () => !b.ctx.devices.relay.isConnectedHere(away.deviceId));
      const queued = await call(asA, "POST", "/command/v1/runs", token, {
        command: "hostname",
        devices: [away.uuid],
        queue_window_s: 60,
      });
      const queuedId = (queued.json as { id: number; devices: { state: string }[] }).id;
      expect((queued.json as { devices: { state: string }[] }).devices[0]?.state).toBe("waiting_online");
      away.runtime.start();
      await eventually(async () => {
        const after = (await call(asA, "GET", `/command/v1/runs/${queuedId}`, token)).json as { status: string };
        return after.status === "finished";
      }, 20_000);
      const after = (await call(asA, "GET", `/command/v1/runs/${queuedId}`, token)).json as {
        devices: { state: string; output: string }[];
      };
      expect(after.devices[0]).toMatchObject({ state: "succeeded", output: `${away.uuid.slice(0, 7)}\n` });
    } finally {
      await simulator.stop();
    }
  }, 60_000);
});
