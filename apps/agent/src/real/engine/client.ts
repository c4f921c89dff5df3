import fs from "node:fs";
import Docker from "dockerode";

/** balena-engine's socket on balenaOS; Docker's everywhere else. */
const BALENA_ENGINE_SOCKET = "/var/run/balena-engine.sock";
const DOCKER_SOCKET = "/var/run/docker.sock";

/** The engine to use: `--docker-socket`, else `DOCKER_HOST`, else balena-engine's or Docker's socket. */
export function defaultEngineAddress(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DOCKER_HOST) return env.DOCKER_HOST;
  return fs.existsSync(BALENA_ENGINE_SOCKET) ? BALENA_ENGINE_SOCKET : DOCKER_SOCKET;
}

/** `unix:///path`, a bare socket path, or `tcp://host:port` / `http://host:port`. */
export function engineClient(address: string): Docker {
  if (address.startsWith("unix://")) return new Docker({ socketPath: address.slice("unix://".length) });
  if (address.startsWith("/")) return new Docker({ socketPath: address });
  const url = new URL(address.replace(/^tcp:/, "http:"));
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: "http" });
}

export class EngineUnreachable extends Error {}

/** Connects and checks the engine answers, so a wrong socket fails at start with a clear message. */
export async function connectEngine(address: string): Promise<{ docker: Docker; version: string }> {
  const docker = engineClient(address);
  try {
    await docker.ping();
    const version = await docker.version();
    return { docker, version: `${version.Components?.[0]?.Name ?? "Docker Engine"} ${version.Version}` };
  } catch (error) {
    throw new EngineUnreachable(
      `cannot reach a container engine (Docker Engine API) at ${address}: ${(error as Error).message}. ` +
        "Start Docker, balena-engine or `podman system service`, or pass --docker-socket PATH (or set DOCKER_HOST)",
    );
  }
}
