import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Docker from "dockerode";
import { CONTAINERS_CONF, ensureContainerTools } from "./registry.ts";

export type TestPodman = {
  /** The Docker Engine API socket (FLOTILLA_BUILDER=unix://…). */
  socket: string;
  /** Runs the podman CLI on the same storage and configuration. */
  podman(...args: string[]): Promise<string>;
  stop(): Promise<void>;
};

/**
 * podman's Docker Engine API service on a socket of its own, trusting the given test registries
 * over plain HTTP (real ones speak HTTPS). Images live in podman's usual storage.
 */
export async function startPodman(insecureRegistries: string[]): Promise<TestPodman> {
  ensureContainerTools();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-podman-"));
  fs.writeFileSync(
    path.join(dir, "registries.conf"),
    insecureRegistries.map((host) => `[[registry]]\nlocation = "${host}"\ninsecure = true\n`).join("\n"),
  );
  const env = { ...process.env, CONTAINERS_CONF, CONTAINERS_REGISTRIES_CONF: path.join(dir, "registries.conf") };
  const socket = path.join(dir, "podman.sock");
  const child: ChildProcess = spawn("podman", ["system", "service", "--time=0", `unix://${socket}`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  child.stderr?.on("data", (chunk) => {
    errors = (errors + chunk).slice(-4000);
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const end = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`podman system service exited (${child.exitCode}): ${errors}`);
    }
    const ok = fs.existsSync(socket) && (await new Docker({ socketPath: socket }).ping().then(Boolean, () => false));
    if (ok) break;
    if (Date.now() > end) {
      await stop();
      throw new Error(`podman system service did not open ${socket}: ${errors}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const podman = async (...args: string[]) => (await promisify(execFile)("podman", args, { env })).stdout;
  return { socket, podman, stop };
}
