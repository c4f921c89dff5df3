import cluster, { type Worker } from "node:cluster";
import type { Logger } from "pino";
import type { Config } from "./config.ts";
import { openDatabase } from "./db/index.ts";
import { ensureAdmin, seedDemo } from "./features/demo/seed.ts";

/**
 * One worker process per core (FLOTILLA_WORKERS, docs/operations.md "Workers"): the primary
 * migrates the database and seeds it once, then starts the workers, which share the ports
 * (node's cluster) and share devices through Redis as instances do. A worker that dies is
 * replaced (its devices reconnect to the others meanwhile); SIGTERM drains every worker.
 */

const RESTART_DELAY_MS = 1000;

/**
 * How the workers get their connections. Node's default on Linux (round-robin) has the primary
 * accept every connection and pass it to one worker at a time, each worker's next one waiting for
 * its answer to the last: under a connect storm the primary held 10,573 accepted sockets (5,303 of
 * them already given up by their devices) while it was 98 % idle and the devices waited past their
 * handshake timeout (docs/benchmarks.md, scale bench "With worker processes"). Here each worker accepts from the
 * shared listening socket itself, as fast as its event loop turns; the less busy a worker, the
 * more it takes. NODE_CLUSTER_SCHED_POLICY=rr keeps node's way.
 */
export function chooseScheduling() {
  if (process.env.NODE_CLUSTER_SCHED_POLICY) return;
  cluster.schedulingPolicy = cluster.SCHED_NONE;
}
const STOP_TIMEOUT_MS = 15_000;

export type WorkerMessage = { type: "ready" };

/** The worker's number (0 … workers − 1): worker 0 also runs what must run once (the device VPN, demo devices). */
export const workerIndex = () => Number(process.env.FLOTILLA_WORKER_INDEX ?? 0);

export async function runPrimary(config: Config, logger: Logger) {
  try {
    const { db, applied } = await openDatabase(config);
    await ensureAdmin(db, config, logger);
    await seedDemo(db, config, logger, applied[0] === "0000_init");
    await db.close();
  } catch (error) {
    process.stderr.write(`flotilla: cannot open the database (DATABASE_URL): ${(error as Error).message}\n`);
    process.exit(1);
  }
  chooseScheduling();
  const workers = new Map<number, Worker>();
  let stopping = false;
  let announced = false;
  const readyOnes = new Set<number>();

  const fork = (index: number) => {
    const worker = cluster.fork({ FLOTILLA_WORKER_INDEX: String(index) });
    workers.set(index, worker);
    logger.info(`worker ${index} started (process ${worker.process.pid})`);
    worker.on("message", (message: WorkerMessage) => {
      if (message?.type !== "ready") return;
      readyOnes.add(index);
      if (announced || readyOnes.size < config.workers) return;
      announced = true;
      logger.info(
        { workers: config.workers, highlight: true },
        `Flotilla ready in ${process.uptime().toFixed(2)} s with ${config.workers} workers: dashboard ${config.publicUrl}, API ${config.apiUrl}`,
      );
    });
    worker.on("exit", (code, signal) => {
      if (workers.get(index) === worker) workers.delete(index);
      if (stopping) return;
      logger.warn(`worker ${index} (process ${worker.process.pid}) ended (${signal ?? code}); starting another`);
      setTimeout(() => {
        if (!stopping) fork(index);
      }, RESTART_DELAY_MS).unref();
    });
  };
  for (let index = 0; index < config.workers; index++) fork(index);

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received: stopping the workers`);
    const exits = [...workers.values()].map(
      (worker) => new Promise<void>((resolve) => worker.once("exit", () => resolve())),
    );
    for (const worker of workers.values()) worker.process.kill("SIGTERM");
    const timer = setTimeout(() => {
      logger.error("the workers took too long to stop, ending them");
      for (const worker of workers.values()) worker.process.kill("SIGKILL");
    }, STOP_TIMEOUT_MS);
    timer.unref();
    await Promise.all(exits);
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}
