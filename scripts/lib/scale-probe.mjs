// Loaded into the API process by scripts/bench-scale.ts (NODE_OPTIONS=--import …): once a second it
// writes the process's memory, CPU and event-loop delay to `<BENCH_PROBE_FILE>.<pid>` (one file
// for each process: with FLOTILLA_WORKERS the primary and every worker load it), counted since the
// last SIGUSR2 (the benchmark sends one to the primary, which passes it on to its workers, when a
// measuring window opens). With
// BENCH_PROFILE=1 it also runs the CPU profiler from that signal on, and writes the profile (or a
// heap snapshot) to the path the benchmark puts in `<BENCH_PROBE_FILE>.ask` ("profile PATH",
// "heap PATH"); --cpu-prof is not allowed in NODE_OPTIONS and a killed process writes none.
import cluster from "node:cluster";
import fs from "node:fs";
import inspector from "node:inspector";
import { monitorEventLoopDelay } from "node:perf_hooks";
import v8 from "node:v8";

const file = process.env.BENCH_PROBE_FILE && `${process.env.BENCH_PROBE_FILE}.${process.pid}`;
if (file) {
  const profiler = process.env.BENCH_PROFILE === "1" ? new inspector.Session() : null;
  profiler?.connect();
  profiler?.post("Profiler.enable");
  // The histogram holds whole sampling intervals: what is late is what exceeds the 10 ms.
  const late = (ns) => Math.max(0, ns / 1e6 - 10);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let cpu = process.cpuUsage();
  let since = performance.now();
  let peakRss = 0;
  process.on("SIGUSR2", () => {
    if (cluster.isPrimary) for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGUSR2");
    delay.reset();
    cpu = process.cpuUsage();
    since = performance.now();
    peakRss = 0;
    profiler?.post("Profiler.stop", () => profiler.post("Profiler.start"));
  });
  const answerAsk = () => {
    const ask = `${file}.ask`;
    if (!fs.existsSync(ask)) return;
    const [what, target] = fs.readFileSync(ask, "utf8").trim().split(" ");
    fs.rmSync(ask);
    if (what === "heap" && target) v8.writeHeapSnapshot(target);
    if (what === "profile" && target && profiler) {
      profiler.post("Profiler.stop", (error, result) => {
        if (!error) fs.writeFileSync(target, JSON.stringify(result.profile));
        profiler.post("Profiler.start");
      });
    }
  };
  setInterval(() => {
    answerAsk();
    const memory = process.memoryUsage();
    peakRss = Math.max(peakRss, memory.rss);
    const used = process.cpuUsage(cpu);
    const sample = {
      rss: memory.rss,
      peakRss,
      heapUsed: memory.heapUsed,
      external: memory.external,
      cpuMs: (used.user + used.system) / 1000,
      elapsedMs: performance.now() - since,
      loopP50Ms: late(delay.percentile(50)),
      loopP99Ms: late(delay.percentile(99)),
      loopMaxMs: late(delay.max),
    };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(sample));
    fs.renameSync(`${file}.tmp`, file);
  }, 1000).unref();
}
