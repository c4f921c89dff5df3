import { execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";

type Provide = (key: string, value: string) => void;

const ROOT = path.resolve(import.meta.dirname, "../../..");
/** The one test image: FROM scratch + the static busybox, serving /www with httpd by default. */
export const TEST_IMAGE = "localhost/flotilla-test/busybox:base";
/**
 * Test fleets' uuids start with this and 4 hex digits of the run, so the teardown finds what a
 * failed test of this run left behind and never touches another run's (runs share the engine's storage).
 */
export const TEST_APP_PREFIX = "f1077e57";

const DOCKERFILE = `FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN mkdir -p /www /tmp && echo hello from busybox > /www/index.html
CMD ["/bin/httpd", "-f", "-p", "8000", "-h", "/www"]
`;

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A port nothing listens on now (the registry's, a container port published on 127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Real containers for the agent's engine tests: podman (installed by scripts/ensure-containers.sh,
 * with its containers.conf) serves the Docker Engine API on a socket of this run, the test image
 * is built once and shared by tag, and a CNCF registry on 127.0.0.1 holds it too (pulls with progress).
 */
export async function containersSetup({ provide }: { provide: Provide }) {
  execFileSync("bash", [path.join(ROOT, "scripts/ensure-containers.sh")], { stdio: "inherit" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-podman-"));
  const prefix = `${TEST_APP_PREFIX}${crypto.randomBytes(2).toString("hex")}`;
  const registry = `127.0.0.1:${await freePort()}`;
  // Plain HTTP to the test registry (a device's registry speaks HTTPS).
  fs.writeFileSync(path.join(dir, "registries.conf"), `[[registry]]\nlocation = "${registry}"\ninsecure = true\n`);
  const env = {
    ...process.env,
    CONTAINERS_CONF: path.join(ROOT, ".cache/containers/containers.conf"),
    CONTAINERS_REGISTRIES_CONF: path.join(dir, "registries.conf"),
  };
  fs.writeFileSync(
    path.join(dir, "registry.yml"),
    `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/registry\nhttp:\n  addr: ${registry}\n`,
  );
  const registryProcess = spawn("docker-registry", ["serve", path.join(dir, "registry.yml")], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  const socket = path.join(dir, "podman.sock");
  const service = spawn("podman", ["system", "service", "--time=0", `unix://${socket}`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  service.stderr.on("data", (chunk) => {
    errors = (errors + chunk).slice(-4000);
  });
  const docker = new Docker({ socketPath: socket });
  try {
    await until(async () => {
      if (service.exitCode !== null) throw new Error(`podman system service exited: ${errors}`);
      await docker.ping();
      return true;
    }, "podman's Docker API socket");
    const context = path.join(dir, "image");
    fs.mkdirSync(context);
    fs.copyFileSync("/bin/busybox", path.join(context, "busybox"));
    fs.writeFileSync(path.join(context, "Dockerfile"), DOCKERFILE);
    execFileSync("podman", ["build", "-q", "-t", TEST_IMAGE, context], { env, stdio: ["ignore", "ignore", "inherit"] });
    await until(() => fetch(`http://${registry}/v2/`).then((response) => response.ok), "the test registry");
    execFileSync(
      "podman",
      ["push", "-q", "--tls-verify=false", TEST_IMAGE, `docker://${registry}/flotilla-test/busybox:base`],
      { env, stdio: ["ignore", "ignore", "inherit"] },
    );
  } catch (error) {
    service.kill();
    registryProcess.kill();
    throw error;
  }
  provide("dockerSocket", socket);
  provide("registry", registry);
  provide("testAppPrefix", prefix);
  return async () => {
    // What a failed test left: its containers, networks and volumes (all named after a test fleet).
    const left = await docker.listContainers({ all: true, filters: { label: ["io.balena.supervised=true"] } });
    for (const container of left) {
      if (container.Labels["io.balena.app-uuid"]?.startsWith(prefix)) {
        await docker
          .getContainer(container.Id)
          .remove({ force: true })
          .catch(() => {});
      }
    }
    for (const network of await docker.listNetworks()) {
      if (network.Name.startsWith(prefix))
        await docker
          .getNetwork(network.Id)
          .remove()
          .catch(() => {});
    }
    for (const volume of (await docker.listVolumes()).Volumes ?? []) {
      if (volume.Name.startsWith(prefix))
        await docker
          .getVolume(volume.Name)
          .remove()
          .catch(() => {});
    }
    service.kill();
    registryProcess.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
