import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import type { AppReport, CurrentState } from "../../protocol/state-report.ts";
import { type TargetState, targetRelease } from "../../protocol/target-state.ts";
import { hasImage, pullImage } from "./pull.ts";
import { LABEL, type ServiceSpec, serviceSpec, startOrder } from "./service.ts";

/** A log line for the device's log stream (system lines, or a service's with its id). */
export type EngineLog = { message: string; isSystem?: boolean; isStdErr?: boolean; serviceId?: number };

export type AppRunnerOptions = {
  docker: Docker;
  deviceUuid: string;
  /** Where the per-service lock directories live (balena: /tmp/balena-supervisor). */
  lockRoot: string;
  /** A host-wide lock file that also holds updates (the agent's --update-lock-file). */
  hostLockFile?: string;
  log: (line: EngineLog) => void;
  /** Something reportable changed (progress, status): report soon. */
  changed: () => void;
  /**
   * The device's registry and its credentials there: balena's supervisor logs in as `d_{uuid}`
   * with its device key, and the registry's token service decides what it may pull.
   */
  registryAuth?: RegistryAuth;
  /** How often a held update lock is looked at again (default 2 s). */
  lockPollMs?: number;
  /** After the engine refused, the release is tried again this much later (default 30 s). */
  retryMs?: number;
};

/** The credentials for one registry (`host[:port]`, as image names start). */
export type RegistryAuth = { registry: string; username: string; password: string };

type Container = Docker.ContainerInfo;

/** The registry host of an image reference (`registry.example.com/app/main@sha256:…`), or null for Docker Hub's. */
export function registryOf(image: string): string | null {
  const first = image.split("/")[0] ?? "";
  return image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost") ? first : null;
}

/**
 * What to pull `image` with: the credentials only when the image names their registry (same
 * host:port, any case), so the device key never goes to Docker Hub or another registry.
 */
export function credentialsFor(image: string, auth: RegistryAuth | undefined): Docker.AuthConfig | undefined {
  const registry = registryOf(image);
  if (!auth || registry === null || registry.toLowerCase() !== auth.registry.toLowerCase()) return undefined;
  return { username: auth.username, password: auth.password, serveraddress: registry };
}

/** balena's service status words for the engine's container states. */
const STATUS: Record<string, string> = {
  created: "Installing",
  running: "Running",
  restarting: "Restarting",
  paused: "Paused",
  exited: "exited",
  dead: "Dead",
  removing: "Stopping",
};

/** A newer target state arrived while an update waited for its lock. */
class Superseded extends Error {}

const STRATEGIES = new Set(["download-then-kill", "kill-then-download", "delete-then-download"]);

/**
 * Runs the target release's services on the engine as balena's supervisor does: pulls with
 * progress, replaces containers per `io.balena.update.strategy` once no update lock is held,
 * keeps containers whose configuration did not change (also across agent restarts: they are
 * found by their labels), and removes the images no service needs any more.
 */
export class AppRunner {
  private target: TargetState | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  /** Ends the current wait for a lock early (close). */
  private wake: (() => void) | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private containers: Container[] = [];
  private progress = new Map<string, number>();
  private reported = new Set<string>();
  /** Followed container logs by container id; aborting ends the request, answered or not yet. */
  private logStreams = new Map<string, AbortController>();
  /**
   * From when (s) to follow a container's log next: 0 for containers this agent created (their
   * whole output), the end of the last stream for one that stopped or restarted. Others, found
   * running at start, from now: the agent before this one sent their earlier lines.
   */
  private logsFrom = new Map<string, number>();
  private stopped = false;
  status = "Idle";
  updateStatus = "idle";
  currentCommit: string | null = null;
  force = false;
  /** Downloaded and held by an update lock: nothing moves until it is released. */
  waitingForLock = false;
  lastError: string | null = null;

  constructor(private readonly options: AppRunnerOptions) {}

  get appUuid(): string | null {
    return targetRelease(this.target).appUuid;
  }

  /** A new target state: applied in the background, one run at a time. */
  setTarget(state: TargetState) {
    this.target = state;
    void this.apply();
  }

  /** Applies the target; a target arriving meanwhile is applied right after. Resolves when done. */
  apply(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.reconcile();
          this.lastError = null;
        } catch (error) {
          // A newer target while waiting for a lock: the loop applies that one instead.
          if (error instanceof Superseded) continue;
          this.lastError = (error as Error).message;
          this.updateStatus = "aborted";
          this.status = "Idle";
          this.options.log({ message: `Failed to apply the release: ${this.lastError}`, isSystem: true });
          if (!this.again && !this.stopped) {
            this.retryTimer = setTimeout(() => void this.apply(), this.options.retryMs ?? 30_000);
          }
        }
      } while (this.again && !this.stopped);
      this.running = null;
      this.options.changed();
    })();
    return this.running;
  }

  /** Stops watching (the containers keep running: they are the device's, not the agent's). */
  close() {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.wake?.();
    for (const id of [...this.logStreams.keys()]) this.stopFollowing(id);
  }

  private stopFollowing(id: string) {
    this.logStreams.get(id)?.abort();
    this.logStreams.delete(id);
    this.logsFrom.delete(id);
  }

  /** The containers this agent made for the app, as the engine lists them now. */
  async refresh(): Promise<Container[]> {
    const appUuid = this.appUuid;
    if (!appUuid) return [];
    this.containers = await this.options.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL.appUuid}=${appUuid}`, `${LABEL.supervised}=true`] },
    });
    for (const container of this.containers) if (container.State === "running") this.followLogs(container);
    return this.containers;
  }

  /** Whether an update lock is held: a service's `/tmp/balena/updates.lock`, or the host's lock file. */
  locked(): boolean {
    const appUuid = this.appUuid;
    if (this.options.hostLockFile && fs.existsSync(this.options.hostLockFile)) return true;
    if (!appUuid) return false;
    const root = path.join(this.options.lockRoot, "services", appUuid);
    let services: string[] = [];
    try {
      services = fs.readdirSync(root);
    } catch {
      return false;
    }
    return services.some((service) => {
      const dir = path.join(root, service);
      return fs.existsSync(path.join(dir, "updates.lock")) || fs.existsSync(path.join(dir, "resin-updates.lock"));
    });
  }

  private lockDir(appUuid: string, service: string) {
    const dir = path.join(this.options.lockRoot, "services", appUuid, service);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  private setStatus(status: string, updateStatus: string) {
    this.status = status;
    this.updateStatus = updateStatus;
    this.options.changed();
  }

  private async reconcile() {
    const state = this.target;
    const { appUuid, commit, release } = targetRelease(state);
    if (!state || !appUuid || !commit || !release) return;
    const app = state.apps?.[appUuid];
    const context = {
      appId: app?.id ?? 0,
      appUuid,
      appName: app?.name ?? "",
      commit,
      releaseId: release.id ?? 0,
      deviceUuid: this.options.deviceUuid,
    };
    const specs = startOrder(
      Object.entries(release.services ?? {}).map(([name, service]) =>
        serviceSpec(name, service, { ...context, lockDir: this.lockDir(appUuid, name) }),
      ),
    );
    for (const spec of specs) {
      for (const problem of spec.problems) {
        const key = `${commit}:${spec.name}:${problem}`;
        if (this.reported.has(key)) continue;
        this.reported.add(key);
        this.options.log({ message: `Service ${spec.name}: ${problem}`, isSystem: true });
      }
    }
    const existing = await this.refresh();
    const keep = (spec: ServiceSpec) =>
      existing.find((c) => c.Labels[LABEL.serviceName] === spec.name && c.Labels[LABEL.configHash] === spec.hash);
    const changes = specs.filter((spec) => !keep(spec));
    const byName = new Set(specs.map((spec) => spec.name));
    const leftovers = existing.filter(
      (c) => !byName.has(c.Labels[LABEL.serviceName] ?? "") || !specs.some((spec) => keep(spec)?.Id === c.Id),
    );
    if (changes.length === 0 && leftovers.length === 0) {
      if (this.currentCommit === null) {
        const kept = `${existing.length} container${existing.length === 1 ? "" : "s"} kept`;
        this.options.log({ message: `Release ${commit.slice(0, 7)} is running (${kept})`, isSystem: true });
      }
      this.currentCommit = commit;
      if (this.updateStatus !== "idle") this.setStatus("Idle", "done");
      return;
    }
    // The running release, as its containers say (a restarted agent knows it from them).
    const newRelease = !existing.some((c) => c.Labels[LABEL.commit] === commit);
    if (newRelease) this.options.log({ message: `Downloading release ${commit.slice(0, 7)}`, isSystem: true });
    // Said once the new containers start; read now, before any old container goes.
    const variableLines = newRelease ? [] : await this.variableChanges(changes, leftovers);
    const strategy = this.strategy(release.services ?? {});
    if (strategy !== "download-then-kill") {
      await this.waitForLock();
      await this.removeContainers(leftovers);
      if (strategy === "delete-then-download") await this.removeUnusedImages(specs, leftovers);
    }
    await this.download(changes);
    this.setStatus("Installing", "downloaded");
    if (strategy === "download-then-kill") await this.waitForLock();
    this.setStatus("Starting", "applying changes");
    await this.ensureNetworkAndVolumes(appUuid, changes);
    await this.removeContainers(leftovers);
    for (const spec of changes) {
      const container = await this.options.docker.createContainer(spec.create);
      this.logsFrom.set(container.id, 0);
      await container.start();
      for (const line of variableLines.filter((l) => l.service === spec.name)) this.options.log(line.log);
      if (!newRelease) {
        this.options.log({ message: `Restarted service ${spec.name} with its new environment`, isSystem: true });
      }
    }
    await this.removeUnusedImages(specs, leftovers);
    this.currentCommit = commit;
    this.progress.clear();
    this.force = false;
    await this.refresh();
    if (newRelease) this.options.log({ message: `Release ${commit.slice(0, 7)} is running`, isSystem: true });
    this.setStatus("Idle", "done");
  }

  /** "Applied environment variable NAME to service" lines, as the simulator writes them, from the old container's. */
  private async variableChanges(changes: ServiceSpec[], leftovers: Container[]) {
    const lines: { service: string; log: EngineLog }[] = [];
    const env = (list: string[] | undefined) =>
      new Map((list ?? []).map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
    for (const spec of changes) {
      const old = leftovers.find((c) => c.Labels[LABEL.serviceName] === spec.name);
      if (!old) continue;
      const info = await this.options.docker
        .getContainer(old.Id)
        .inspect()
        .catch(() => null);
      const before = env(info?.Config.Env);
      const after = env(spec.create.Env);
      const serviceId = Number(spec.create.Labels?.[LABEL.serviceId]) || undefined;
      const say = (message: string) =>
        lines.push({ service: spec.name, log: { message, ...(serviceId ? { serviceId } : {}) } });
      for (const [name, value] of [...after].sort()) {
        if (before.get(name) !== value) say(`Applied environment variable ${name} to ${spec.name}`);
      }
      for (const name of [...before.keys()].sort()) {
        if (!after.has(name)) say(`Removed environment variable ${name} from ${spec.name}`);
      }
    }
    return lines;
  }

  /** The release's strategy: the first service label that names one (balena sets it per service). */
  private strategy(services: Record<string, { labels?: Record<string, string> }>) {
    for (const service of Object.values(services)) {
      const value = service.labels?.["io.balena.update.strategy"];
      if (!value) continue;
      if (STRATEGIES.has(value)) return value;
      this.options.log({
        message: `Update strategy ${value} is not supported, using download-then-kill`,
        isSystem: true,
      });
    }
    return "download-then-kill";
  }

  /** Holds while an update lock is held, unless the update is forced; a newer target ends the wait. */
  private async waitForLock() {
    let said = false;
    // balena's BALENA_SUPERVISOR_OVERRIDE_LOCK config variable: updates ignore the locks.
    const override = ["1", "true"].includes(this.target?.config?.BALENA_SUPERVISOR_OVERRIDE_LOCK ?? "");
    while (this.locked() && !this.force && !override && !this.stopped) {
      if (!said) {
        said = true;
        this.options.log({ message: "Updates are locked, waiting", isSystem: true });
        this.options.changed();
      }
      if (this.again) throw new Superseded();
      this.waitingForLock = true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.lockPollMs ?? 2000);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
      this.waitingForLock = false;
    }
    if (this.stopped) throw new Superseded();
  }

  private async download(changes: ServiceSpec[]) {
    const pulls = [];
    for (const spec of changes) {
      if (await hasImage(this.options.docker, spec.image)) {
        this.progress.set(spec.name, 100);
        continue;
      }
      this.progress.set(spec.name, 0);
      pulls.push(spec);
    }
    if (pulls.length === 0) return;
    this.setStatus("Downloading", "downloading");
    for (const spec of pulls) {
      await pullImage(
        this.options.docker,
        spec.image,
        (percent) => {
          // A report per 5 % at most: a pull is many small progress events.
          const last = this.progress.get(spec.name) ?? 0;
          if (percent < 100 && percent - last < 5) return;
          this.progress.set(spec.name, percent);
          this.options.changed();
        },
        credentialsFor(spec.image, this.options.registryAuth),
      );
    }
  }

  private async ensureNetworkAndVolumes(appUuid: string, specs: ServiceSpec[]) {
    const { docker } = this.options;
    const networks = new Set(specs.map((spec) => String(spec.create.HostConfig?.NetworkMode)));
    const present = new Set((await docker.listNetworks()).map((network) => network.Name));
    for (const name of networks) {
      if (present.has(name)) continue;
      await docker.createNetwork({
        Name: name,
        Driver: "bridge",
        Labels: { [LABEL.supervised]: "true", [LABEL.appUuid]: appUuid },
      });
    }
    const volumes = new Set((await docker.listVolumes()).Volumes?.map((volume) => volume.Name) ?? []);
    for (const name of new Set(specs.flatMap((spec) => spec.volumes))) {
      if (volumes.has(name)) continue;
      await docker.createVolume({ Name: name, Labels: { [LABEL.supervised]: "true", [LABEL.appUuid]: appUuid } });
    }
  }

  /** Stops and removes the containers that go: those of other releases, and the changed services'. */
  private async removeContainers(leftovers: Container[]) {
    for (const container of leftovers) {
      if (!this.containers.some((c) => c.Id === container.Id)) continue;
      await this.options.docker.getContainer(container.Id).remove({ force: true, v: false });
      this.stopFollowing(container.Id);
    }
    this.containers = this.containers.filter((container) => !leftovers.some((c) => c.Id === container.Id));
  }

  /**
   * The images of removed containers that no service of the target names: nothing needs them now.
   * Removed by name, so an image another name still points to is only untagged.
   */
  private async removeUnusedImages(specs: ServiceSpec[], removed: Container[]) {
    const { docker } = this.options;
    const wanted = new Set<string>();
    for (const spec of specs) {
      wanted.add(spec.image);
      const id = await docker
        .getImage(spec.image)
        .inspect()
        .then(
          (image) => image.Id,
          () => null,
        );
      if (id) wanted.add(id);
    }
    for (const image of new Set(removed.map((container) => container.Image))) {
      if (wanted.has(image) || wanted.has(`sha256:${image}`)) continue;
      // An image a container still uses stays: the engine refuses, and that is right.
      await docker
        .getImage(image)
        .remove()
        .catch(() => {});
    }
  }

  /** The container's output into the device's log stream, from now on. */
  private followLogs(container: Container) {
    if (this.logStreams.has(container.Id) || this.stopped) return;
    const serviceId = Number(container.Labels[LABEL.serviceId]) || undefined;
    const { docker } = this.options;
    const since = this.logsFrom.get(container.Id) ?? Math.floor(Date.now() / 1000);
    const abort = new AbortController();
    this.logStreams.set(container.Id, abort);
    // podman answers a follow request only once the container writes: abort, not destroy, ends it.
    docker
      .getContainer(container.Id)
      .logs({ follow: true, stdout: true, stderr: true, since, timestamps: false, abortSignal: abort.signal })
      .then((stream) => {
        const line = (isStdErr: boolean) => {
          let rest = "";
          return {
            write: (chunk: Buffer) => {
              rest += chunk.toString("utf8");
              const lines = rest.split("\n");
              rest = lines.pop() ?? "";
              for (const message of lines) {
                if (message) this.options.log({ message, isStdErr, ...(serviceId ? { serviceId } : {}) });
              }
              return true;
            },
          };
        };
        docker.modem.demuxStream(stream, line(false) as never, line(true) as never);
        const ended = () => {
          if (this.logStreams.get(container.Id) !== abort) return;
          this.logStreams.delete(container.Id);
          this.logsFrom.set(container.Id, Math.floor(Date.now() / 1000));
        };
        stream.on("end", ended);
        stream.on("error", ended);
      })
      .catch(() => {
        if (this.logStreams.get(container.Id) === abort) this.logStreams.delete(container.Id);
      });
  }

  /** The app's containers of a service (by name or by the image id balena-sdk sends), or all of them. */
  private async pick(target: { serviceName?: string; imageId?: number }): Promise<Container[]> {
    const containers = await this.refresh();
    const current = containers.filter((c) => c.Labels[LABEL.commit] === this.currentCommit);
    if (target.serviceName !== undefined)
      return current.filter((c) => c.Labels[LABEL.serviceName] === target.serviceName);
    if (target.imageId !== undefined) return current.filter((c) => c.Labels[LABEL.imageId] === String(target.imageId));
    return current;
  }

  /** start-service, stop-service, restart-service; answers the services acted on (none: not found). */
  async control(action: "start" | "stop" | "restart", target: { serviceName?: string; imageId?: number }) {
    const containers = await this.pick(target);
    for (const info of containers) {
      const container = this.options.docker.getContainer(info.Id);
      // An engine answers 304 when the container is already in that state: not a failure.
      const done = (error: { statusCode?: number }) => {
        if (error.statusCode !== 304) throw error;
      };
      if (action === "start") await container.start().catch(done);
      else if (action === "stop") await container.stop().catch(done);
      else await container.restart();
    }
    await this.refresh();
    this.options.changed();
    return containers.map((c) => c.Labels[LABEL.serviceName] ?? "");
  }

  /** Purge: the app's containers and named volumes go, then the release starts again with empty volumes. */
  async purge() {
    const appUuid = this.appUuid;
    const containers = await this.refresh();
    for (const info of containers) await this.options.docker.getContainer(info.Id).remove({ force: true });
    this.containers = [];
    if (appUuid) {
      const volumes =
        (await this.options.docker.listVolumes({ filters: { label: [`${LABEL.appUuid}=${appUuid}`] } })).Volumes ?? [];
      for (const volume of volumes) await this.options.docker.getVolume(volume.Name).remove();
    }
    await this.apply();
  }

  /** A running container of the service, for a terminal; null when there is none. */
  async runningContainer(serviceName: string): Promise<Container | null> {
    const containers = await this.refresh();
    return containers.find((c) => c.Labels[LABEL.serviceName] === serviceName && c.State === "running") ?? null;
  }

  /** The `apps` part of the state report, and the device's status fields (the simulator's shapes). */
  report(): Pick<CurrentState, "status" | "update_status" | "download_progress" | "apps"> {
    const { appUuid, commit, release } = targetRelease(this.target);
    const downloads = [...this.progress.values()];
    const downloading = this.updateStatus === "downloading" && downloads.length > 0;
    const base = {
      status: this.status,
      update_status: this.updateStatus,
      download_progress: downloading ? Math.floor(downloads.reduce((a, b) => a + b, 0) / downloads.length) : null,
    };
    if (!appUuid) return base;
    if (!commit) return { ...base, apps: { [appUuid]: { release_uuid: null, releases: {} } } };
    const services: AppReport["releases"][string]["services"] = {};
    const updating = commit !== this.currentCommit;
    for (const [name, service] of Object.entries(release?.services ?? {})) {
      const container = this.containers.find(
        (c) => c.Labels[LABEL.serviceName] === name && c.Labels[LABEL.commit] === commit,
      );
      const progress = this.progress.get(name);
      services[name] = {
        image: service.image ?? "",
        status: container
          ? (STATUS[container.State] ?? container.State)
          : updating && this.updateStatus === "downloading"
            ? "Downloading"
            : "Installing",
        download_progress: updating && progress !== undefined && progress < 100 ? progress : null,
      };
    }
    return {
      ...base,
      apps: {
        [appUuid]: {
          release_uuid: this.currentCommit,
          releases: { [commit]: { update_status: this.updateStatus, services } },
        },
      },
    };
  }
}
