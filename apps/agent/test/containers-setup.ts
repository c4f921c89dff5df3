import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";

type Provide = (key: string, value: string) => void;

const ROOT = path.resolve(import.meta.dirname, "../../..");
/** The one test image: FROM scratch + the static busybox, serving /www with httpd by default. */
export const TEST_IMAGE = "localhost/flotilla-test/busybox:base";
/** Test fleets' uuids start with this, so the teardown finds what a failed test left behind. */
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

/**
 * Real containers for the agent's engine tests: podman (installed by scripts/ensure-containers.sh,
 * with its containers.conf) serves the Docker Engine API on a socket of this run, and the test
 * image is built once and shared by tag.
 */
export async function containersSetup({ provide }: { provide: Provide }) {
  execFileSync("bash", [path.join(ROOT, "scripts/ensure-containers.sh")], { stdio: "inherit" });
  const env = { ...process.env, CONTAINERS_CONF: path.join(ROOT, ".cache/containers/containers.conf") };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-podman-"));
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
  } catch (error) {
    service.kill();
    throw error;
  }
  provide("dockerSocket", socket);
  return async () => {
    // What a failed test left: its containers, networks and volumes (all named after a test fleet).
    const left = await docker.listContainers({ all: true, filters: { label: ["io.balena.supervised=true"] } });
    for (const container of left) {
      if (container.Labels["io.balena.app-uuid"]?.startsWith(TEST_APP_PREFIX)) {
        await docker
          .getContainer(container.Id)
          .remove({ force: true })
          .catch(() => {});
      }
    }
    for (const network of await docker.listNetworks()) {
      if (network.Name.startsWith(TEST_APP_PREFIX))
        await docker
          .getNetwork(network.Id)
          .remove()
          .catch(() => {});
    }
    for (const volume of (await docker.listVolumes()).Volumes ?? []) {
      if (volume.Name.startsWith(TEST_APP_PREFIX))
        await docker
          .getVolume(volume.Name)
          .remove()
          .catch(() => {});
    }
    service.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
