import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/**
 * The embedded database (PGlite) admits one process: two processes writing one data directory
 * corrupt it, and PGlite itself does not refuse the second. So the process that opens it (the
 * server, or `flotilla-server admin`) holds the directory by listening on a Unix socket inside it.
 * Another process finds the socket answering and stays away; a socket left behind by a process
 * that died answers nothing and is replaced. Nothing is served on it: a connection gets the
 * holder's description and is closed.
 */

export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: string,
  ) {
    super(`${holder} is using the data directory ${dataDir}`);
    this.name = "DataDirInUse";
  }
}

export const lockSocketOf = (dataDir: string) => path.join(path.resolve(dataDir), "flotilla.sock");

/** Unix socket paths are limited to 107 bytes on Linux (104 on macOS). */
const MAX_SOCKET_PATH = 100;

export type DataDirHold = { release(): Promise<void> };

/** Who holds the socket, as it answers; undefined when nothing listens there. */
function holderOf(socketPath: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    let answer = "";
    const socket = net.connect(socketPath);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(answer.trim() || "another process");
    }, 2000);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer = (answer + chunk).slice(0, 200);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      resolve(answer.trim() || "another process");
    });
    socket.on("error", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

function listen(socketPath: string, description: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.end(`${description}\n`));
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      server.unref();
      resolve(server);
    });
  });
}

/**
 * Holds `dataDir` for this process, `description` being what others are told ("the Flotilla
 * server (process 123)"). Throws DataDirInUse when a live process holds it; undefined when the
 * directory's path is too long for a Unix socket (nothing can be checked then).
 */
export async function holdDataDir(dataDir: string, description: string): Promise<DataDirHold | undefined> {
  fs.mkdirSync(dataDir, { recursive: true });
  const socketPath = lockSocketOf(dataDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) return undefined;
  let server: net.Server;
  try {
    server = await listen(socketPath, description);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    const holder = await holderOf(socketPath);
    if (holder !== undefined) throw new DataDirInUse(dataDir, holder);
    // Left behind by a process that is gone.
    fs.rmSync(socketPath, { force: true });
    server = await listen(socketPath, description);
  }
  return {
    release: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          fs.rmSync(socketPath, { force: true });
          resolve();
        });
      }),
  };
}
