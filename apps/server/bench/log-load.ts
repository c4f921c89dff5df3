// The load of bench/device-logs.ts, in its own process so it shares no event loop with the server:
// each device keeps one chunked POST /device/v2/{uuid}/log-stream open (as the agent does) and
// writes one line a second carrying its send time; each viewer holds GET …/logs?stream=1 and
// measures how long a line took to reach it (same clock: one process).
import http from "node:http";

export type LogLoadCommand = {
  origin: string;
  token: string;
  devices: { uuid: string; key: string }[];
  viewers: number;
  warmupMs: number;
  durationMs: number;
};
export type LogLoadStats = {
  sent: number;
  delivered: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  viewerErrors: number;
};

const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

function run(command: LogLoadCommand): Promise<LogLoadStats> {
  const { origin, token, devices, viewers, warmupMs, durationMs } = command;
  const url = new URL(origin);
  const latencies: number[] = [];
  let measuring = false;
  let sent = 0;
  let delivered = 0;
  let viewerErrors = 0;
  const closers: (() => void)[] = [];

  for (let v = 0; v < viewers; v++) {
    const device = devices[v % devices.length];
    if (!device) break;
    const request = http.get(
      {
        host: url.hostname,
        port: url.port,
        path: `/device/v2/${device.uuid}/logs?stream=1`,
        headers: { authorization: `Bearer ${token}` },
        agent,
      },
      (response) => {
        if (response.statusCode !== 200) viewerErrors += 1;
        let partial = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          const now = performance.timeOrigin + performance.now();
          const pieces = (partial + chunk).split("\n");
          partial = pieces.pop() ?? "";
          for (const piece of pieces) {
            if (!piece) continue;
            const sentAt = Number((JSON.parse(piece) as { message: string }).message.slice(2));
            if (measuring) {
              delivered += 1;
              latencies.push(now - sentAt);
            }
          }
        });
      },
    );
    request.on("error", () => {
      viewerErrors += 1;
    });
    closers.push(() => request.destroy());
  }

  const timers: NodeJS.Timeout[] = [];
  for (const [i, device] of devices.entries()) {
    const request = http.request({
      method: "POST",
      host: url.hostname,
      port: url.port,
      path: `/device/v2/${device.uuid}/log-stream`,
      headers: { authorization: `Bearer ${device.key}`, "content-type": "application/x-ndjson" },
      agent,
    });
    request.on("error", () => undefined);
    request.flushHeaders();
    // Spread over the second, as real devices are.
    const start = setTimeout(
      () => {
        timers.push(
          setInterval(() => {
            const now = performance.timeOrigin + performance.now();
            request.write(`${JSON.stringify({ message: `t=${now}`, timestamp: Math.round(now) })}\n`);
            if (measuring) sent += 1;
          }, 1000),
        );
      },
      (i * 1000) / devices.length,
    );
    timers.push(start);
    closers.push(() => request.end());
  }

  return new Promise((resolve) => {
    setTimeout(() => {
      measuring = true;
    }, warmupMs);
    setTimeout(() => {
      measuring = false;
      for (const timer of timers) clearInterval(timer);
      for (const close of closers) close();
      latencies.sort((a, b) => a - b);
      const at = (q: number) =>
        latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
      resolve({
        sent,
        delivered,
        p50: at(0.5),
        p95: at(0.95),
        p99: at(0.99),
        max: latencies.at(-1) ?? Number.NaN,
        viewerErrors,
      });
    }, warmupMs + durationMs);
  });
}

process.on("message", (command: LogLoadCommand) => {
  run(command).then(
    (stats) => {
      process.send?.(stats);
      setTimeout(() => process.exit(0), 200);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
