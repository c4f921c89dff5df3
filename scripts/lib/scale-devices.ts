// One simulator process of scripts/bench-scale.ts (forked, talks over IPC): `startSimulator` —
// the code behind `flotilla-agent simulate` — with a connection set per device, so each device
// costs the API what a real agent does. It counts every 5xx the API answers (undici calls and
// the websocket upgrades) and reports its devices' stats and its own CPU when asked.
import diagnostics from "node:diagnostics_channel";
import { startSimulator } from "../../apps/agent/src/sim/simulator.ts";

export type DevicesCommand =
  | {
      op: "start";
      apiUrl: string;
      provisioningKey: string;
      fleetId: number;
      count: number;
      intervalMs: number;
      stateDir: string;
    }
  | { op: "stats" }
  | { op: "stop" };

export type DevicesStats = {
  online: number;
  reports: number;
  reportErrors: number;
  polls: number;
  pollErrors: number;
  logLines: number;
  cloudlinkDrops: number;
  serverErrors: number;
  cpuMs: number;
  rss: number;
};

export type DevicesAnswer =
  | { op: "started"; uuids: string[] }
  | { op: "stats"; stats: DevicesStats }
  | { op: "failed"; message: string };

let serverErrors = 0;
const count5xx = (status: number | undefined) => {
  if (status !== undefined && status >= 500) serverErrors += 1;
};
diagnostics.subscribe("undici:request:headers", (message) =>
  count5xx((message as { response?: { statusCode?: number } }).response?.statusCode),
);
// The cloudlink upgrade goes through node:http (ws); a refused upgrade ends here with its status.
diagnostics.subscribe("http.client.response.finish", (message) =>
  count5xx((message as { response?: { statusCode?: number } }).response?.statusCode),
);

const send = (answer: DevicesAnswer) => process.send?.(answer);
let simulator: Awaited<ReturnType<typeof startSimulator>> | null = null;

process.on("message", async (command: DevicesCommand) => {
  try {
    if (command.op === "start") {
      simulator = await startSimulator({
        apiUrl: command.apiUrl,
        provisioningKey: command.provisioningKey,
        fleetId: command.fleetId,
        count: command.count,
        intervalMs: command.intervalMs,
        stateDir: command.stateDir,
        connectionPerDevice: true,
        // The simulator's own cloudlink drops are noise here: a dropped socket is the API's doing.
        disconnectChance: 0,
        registerConcurrency: 8,
      });
      send({ op: "started", uuids: simulator.devices.map((device) => device.uuid) });
    } else if (command.op === "stats") {
      const s = simulator?.stats;
      const cpu = process.cpuUsage();
      send({
        op: "stats",
        stats: {
          online: simulator?.devices.filter((device) => device.runtime.online).length ?? 0,
          reports: s?.reports ?? 0,
          reportErrors: s?.reportErrors ?? 0,
          polls: s?.polls ?? 0,
          pollErrors: s?.pollErrors ?? 0,
          logLines: s?.logLines ?? 0,
          cloudlinkDrops: s?.cloudlinkDrops ?? 0,
          serverErrors,
          cpuMs: (cpu.user + cpu.system) / 1000,
          rss: process.memoryUsage().rss,
        },
      });
    } else {
      await simulator?.stop();
      process.exit(0);
    }
  } catch (error) {
    send({ op: "failed", message: error instanceof Error ? error.message : String(error) });
  }
});
