// `npm run bench`: start-up time and request throughput of the real server process.
// Figures go into docs/benchmarks.md by hand, with the machine they were taken on.
import { spawnSync } from "node:child_process";
import { DEMO_EMAIL, DEMO_PASSWORD, startFlotilla } from "../e2e/support/flotilla.ts";
import { measurePageWeight, reportPageWeight } from "./page-weight.ts";

const DURATION_MS = 5000;
const CONCURRENCY = 32;

async function readyTime(output: string): Promise<number> {
  const match = output.match(/Flotilla ready in (\d+\.\d+) s/);
  return match ? Number(match[1]) : Number.NaN;
}

async function load(name: string, url: string, headers: Record<string, string> = {}) {
  const latencies: number[] = [];
  const end = Date.now() + DURATION_MS;
  let errors = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const start = performance.now();
        const response = await fetch(url, { headers });
        await response.arrayBuffer();
        if (!response.ok) errors += 1;
        latencies.push(performance.now() - start);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]?.toFixed(1);
  console.log(
    `${name}: ${Math.round(latencies.length / (DURATION_MS / 1000))} req/s, p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, ${errors} errors (${CONCURRENCY} concurrent, ${DURATION_MS / 1000} s)`,
  );
}

// The dashboard as it is now (rebuilt when its sources changed, before a server serves it).
spawnSync(process.execPath, ["scripts/build-web.mjs"], { stdio: "inherit" });

const cold = await startFlotilla({ LOG_LEVEL: "info", FLOTILLA_RATE_LIMIT: "10000000" });
console.log(`start-up on a fresh data directory: ${await readyTime(cold.output())} s`);
await cold.stop();
const warm = await startFlotilla({ LOG_LEVEL: "info", FLOTILLA_RATE_LIMIT: "10000000" }, cold);
console.log(`start-up on an existing data directory: ${await readyTime(warm.output())} s`);

const token = await (
  await fetch(`${warm.apiUrl}/login_`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: DEMO_EMAIL, password: DEMO_PASSWORD }),
  })
).text();
// Page weight over the wire (issue performance-2): the JavaScript each page makes a browser download.
console.log("page weight (Chromium, JavaScript transferred):");
reportPageWeight(await measurePageWeight(warm.dashboardUrl, warm.apiUrl));

await load("GET /ping", `${warm.apiUrl}/ping`);
await load("GET /actor/v1/whoami (session check + user read)", `${warm.apiUrl}/actor/v1/whoami`, {
  authorization: `Bearer ${token}`,
});
const memory = Number(
  (await import("node:fs")).readFileSync(`/proc/${warm.process.pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)?.[1],
);
console.log(`resident memory after the load: ${Math.round(memory / 1024)} MiB`);
await warm.stop();
