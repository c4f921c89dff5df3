import cluster from "node:cluster";
import path from "node:path";
import type tls from "node:tls";
import { buildApi, buildContext, buildDashboard } from "./app.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { type DataDirHold, DataDirInUse, holdDataDir } from "./db/data-dir-lock.ts";
import { openDatabase } from "./db/index.ts";
import { ensureAdmin, seedDemo } from "./features/demo/seed.ts";
import { startDemoDevices } from "./features/demo/simulated-devices.ts";
import { type SshGateway, startSshGateway } from "./features/ssh-gateway/server.ts";
import { type DeviceVpn, startDeviceVpn } from "./features/vpn/server.ts";
import { issueCertificates, watchServerTls } from "./lib/certificates.ts";
import { createLogger } from "./lib/logger.ts";
import { runPrimary, type WorkerMessage, workerIndex } from "./workers.ts";

const SHUTDOWN_TIMEOUT_MS = 10_000;

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`flotilla: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Connections the kernel holds for the API until a process accepts them (Linux caps it at
 * net.core.somaxconn, 4096 by default). Node's 511 overflowed when thousands of devices connected
 * at once: a dropped SYN is sent again after 1, 3, 7 s, past the agent's 10 s handshake timeout.
 */
const API_LISTEN_BACKLOG = 4096;

async function main() {
  const config = configOrExit();
  const logger = createLogger(config);
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, logger);
  // A worker of several: the primary migrated and seeded; worker 0 runs what must run once.
  const worker = cluster.isWorker ? workerIndex() : undefined;

  // The embedded database admits one process (db/data-dir-lock.ts).
  let hold: DataDirHold | undefined;
  if (!config.databaseUrl) {
    try {
      hold = await holdDataDir(config.dataDir, `the Flotilla server (process ${process.pid})`);
    } catch (error) {
      if (!(error instanceof DataDirInUse)) {
        process.stderr.write(`flotilla: cannot open the database (FLOTILLA_DATA_DIR): ${(error as Error).message}\n`);
        process.exit(1);
      }
      process.stderr.write(
        `flotilla: ${error.holder} is using the embedded database in FLOTILLA_DATA_DIR=${config.dataDir}; it admits one process at a time: stop it first, or give this server another FLOTILLA_DATA_DIR\n`,
      );
      process.exit(1);
    }
    if (!hold)
      logger.warn("FLOTILLA_DATA_DIR's path is too long to hold it with a socket: start one process on it at a time");
  }

  let opened: Awaited<ReturnType<typeof openDatabase>>;
  try {
    opened = await openDatabase(config);
  } catch (error) {
    const which = config.databaseUrl ? "DATABASE_URL" : "FLOTILLA_DATA_DIR";
    process.stderr.write(`flotilla: cannot open the database (${which}): ${(error as Error).message}\n`);
    process.exit(1);
  }
  const { db, applied } = opened;
  if (worker === undefined) {
    await ensureAdmin(db, config, logger);
    await seedDemo(db, config, logger, applied[0] === "0000_init");
  }

  const ctx = await buildContext(config, db, logger);
  const api = await buildApi(ctx, logger);
  const dashboard = await buildDashboard(config, logger);
  try {
    await api.listen({ port: config.apiPort, host: config.host, backlog: API_LISTEN_BACKLOG });
    await dashboard.listen({ port: config.dashboardPort, host: config.host });
  } catch (error) {
    process.stderr.write(`flotilla: cannot listen (FLOTILLA_PORT / FLOTILLA_API_PORT): ${(error as Error).message}\n`);
    process.exit(1);
  }
  let sshGateway: SshGateway | undefined;
  if (config.sshPort !== undefined) {
    try {
      sshGateway = await startSshGateway(ctx, logger, { port: config.sshPort, host: config.host });
    } catch (error) {
      process.stderr.write(`flotilla: cannot start the SSH gateway (FLOTILLA_SSH_PORT): ${(error as Error).message}\n`);
      process.exit(1);
    }
  }
  // The device VPN has its own CA in the data directory (served to devices by /os/v1/config); a
  // renewed server certificate (checked twice a day) restarts openvpn, which reads it at start.
  let vpn: DeviceVpn | undefined;
  let vpnRenewal: NodeJS.Timeout | undefined;
  if (config.vpn && !worker) {
    const settings = config.vpn;
    const pki = path.join(config.dataDir, "vpn");
    const startVpn = () =>
      startDeviceVpn(ctx, logger, {
        ...settings,
        host: config.host,
        certificates: issueCertificates(pki, [settings.host]),
      });
    try {
      vpn = await startVpn();
    } catch (error) {
      process.stderr.write(`flotilla: cannot start the device VPN (FLOTILLA_VPN_PORT): ${(error as Error).message}\n`);
      process.exit(1);
    }
    vpnRenewal = setInterval(() => {
      if (!issueCertificates(pki, [settings.host]).renewed) return;
      logger.info("vpn: the server certificate was renewed; restarting openvpn");
      void vpn
        ?.close()
        .then(startVpn)
        .then((started) => {
          vpn = started;
        })
        .catch((error: unknown) => logger.error({ err: error }, "vpn: cannot restart openvpn"));
    }, 12 * 3_600_000);
    vpnRenewal.unref();
  }
  // A renewed certificate (generated, or the operator's new files) is used without a restart.
  const stopTlsWatch = config.tls
    ? watchServerTls(
        config.tls,
        (options) => {
          (api.server as unknown as tls.Server).setSecureContext(options);
          logger.info("TLS: the API now uses the renewed server certificate");
        },
        (error) => logger.error({ err: error }, "TLS: cannot load a new server certificate; keeping the one in use"),
      )
    : () => undefined;
  const apiPort = (api.server.address() as { port: number }).port;
  const dashboardPort = (dashboard.server.address() as { port: number }).port;
  if (worker === undefined) {
    logger.info(
      { apiPort, dashboardPort, database: db.kind, highlight: true },
      `Flotilla ready in ${process.uptime().toFixed(2)} s: dashboard ${config.publicUrl}, API ${config.apiUrl}`,
    );
  } else {
    logger.info(`worker ${worker} ready`);
    process.send?.({ type: "ready" } satisfies WorkerMessage);
  }

  const stopDemoDevices = worker ? async () => undefined : await startDemoDevices(db, config, logger, apiPort);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received: finishing requests in flight`);
    const timer = setTimeout(() => {
      logger.error("shutdown took too long, exiting");
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    // The simulated devices hold streams and sockets open on the API: they go first.
    await stopDemoDevices();
    stopTlsWatch();
    clearInterval(vpnRenewal);
    await vpn?.close();
    await sshGateway?.close();
    await Promise.all([dashboard.close(), api.close()]);
    await db.close();
    await hold?.release();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

await main();
