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
 * over plain HTTP (real ones speak HTTPS). Images live in podman's usual storage, or with
 * `ownStorage` in a storage of this engine alone (a device's engine), removed with all its
 * containers by `stop`.
 */
export async function startPodman(
  insecureRegistries: string[],
  { ownStorage = false }: { ownStorage?: boolean } = {},
): Promise<TestPodman> {
  ensureContainerTools();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-podman-"));
  const storage = ownStorage ? ["--root", path.join(dir, "storage"), "--runroot", path.join(dir, "run")] : [];
  fs.writeFileSync(
    path.join(dir, "registries.conf"),
    insecureRegistries.map((host) => `[[registry]]\nlocation = "${host}"\ninsecure = true\n`).join("\n"),
  );
  const env = { ...process.env, CONTAINERS_CONF, CONTAINERS_REGISTRIES_CONF: path.join(dir, "registries.conf") };
  const socket = path.join(dir, "podman.sock");
  const child: ChildProcess = spawn("podman", [...storage, "system", "service", "--time=0", `unix://${socket}`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  child.stderr?.on("data", (chunk) => {
    errors = (errors + chunk).slice(-4000);
  });
  const podman = async (...args: string[]) =>
    (await promisify(execFile)("podman", [...storage, ...args], { env })).stdout;
  const stop = async () => {
    // A device's storage goes with its containers, volumes and images (their mounts would
    // outlive the directory); networks are the engine's, shared: the test removes its own.
    if (ownStorage) {
      for (const args of [
        ["rm", "-af", "-t", "0"],
        ["volume", "rm", "-af"],
        ["rmi", "-af"],
      ])
        await podman(...args).catch(() => undefined);
    }
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    }
    if (ownStorage) {
      const mounts = fs
        .readFileSync("/proc/mounts", "utf8")
        .split("\n")
        .map((line) => line.split(" ")[1] ?? "");
      // The overlay driver's own mount of its home, whether /proc/mounts lists it yet or not.
      const overlay = path.join(dir, "storage", "overlay");
      for (const mount of new Set([...mounts.filter((m) => m.startsWith(dir)).reverse(), overlay]))
        await promisify(execFile)("umount", ["-l", mount]).catch(() => undefined);
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
  return { socket, podman, stop };
}

/** The Dockerfile of a busybox image FROM scratch (the only kind these machines can build). */
export const BUSYBOX_BASE =
  'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n';

/**
 * Builds a busybox image from `dockerfile` and pushes it as `reference` to an upstream registry
 * (as Docker Hub holds public images); the engine keeps no copy, so using it means pulling it.
 */
export async function publishBusybox(engine: TestPodman, reference: string, dockerfile = BUSYBOX_BASE) {
  const context = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-upstream-"));
  try {
    fs.copyFileSync("/bin/busybox", path.join(context, "busybox"));
    fs.writeFileSync(path.join(context, "Dockerfile"), dockerfile);
    await engine.podman("build", "-q", "-t", reference, context);
    await engine.podman("push", "-q", reference);
    await engine.podman("rmi", reference);
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
}
