import crypto from "node:crypto";
import type Docker from "dockerode";
import type { TargetService } from "../../protocol/target-state.ts";

/**
 * One service of the target release as a container to create, the way balena's supervisor
 * makes it: the image, the compose settings it supports, the merged environment, and the
 * `io.balena.*` labels by which the agent finds its containers again after a restart.
 */

export const LABEL = {
  supervised: "io.balena.supervised",
  appId: "io.balena.app-id",
  appUuid: "io.balena.app-uuid",
  serviceName: "io.balena.service-name",
  serviceId: "io.balena.service-id",
  imageId: "io.balena.image-id",
  releaseId: "io.balena.release-id",
  commit: "io.balena.release-commit",
  /** Hash of everything the container was created from: unchanged → the container is kept. */
  configHash: "io.balena.flotilla.config-hash",
} as const;

/** The compose keys applied here; `build` is the server's (the target names the built image). */
const APPLIED_KEYS = new Set([
  "image",
  "build",
  "command",
  "entrypoint",
  "environment",
  "labels",
  "ports",
  "expose",
  "volumes",
  "networks",
  "restart",
  "working_dir",
  "user",
  "hostname",
  "depends_on",
]);

export type ServiceContext = {
  appId: number;
  appUuid: string;
  appName: string;
  commit: string;
  releaseId: number;
  deviceUuid: string;
  /** Host directory bind-mounted at /tmp/balena (and /tmp/resin): the service's update lock lives there. */
  lockDir: string;
};

export type ServiceSpec = {
  name: string;
  image: string;
  create: Docker.ContainerCreateOptions;
  /** Named volumes (engine names) the service mounts: created before it, kept across releases. */
  volumes: string[];
  dependsOn: string[];
  /** Settings not applied, said once in the device log. */
  problems: string[];
  hash: string;
};

type Compose = Record<string, unknown>;

/** `a b "c d"` → [a, b, "c d"]: compose's string form of command and entrypoint. */
export function splitCommand(value: unknown): string[] | undefined {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== "string") return undefined;
  const words: string[] = [];
  for (const match of value.matchAll(/"((?:\\.|[^"])*)"|'([^']*)'|(\S+)/g)) {
    words.push(match[1]?.replace(/\\(.)/g, "$1") ?? match[2] ?? match[3] ?? "");
  }
  return words;
}

/** Compose's list (`A=1`) or map form of environment and labels. */
function keyValues(value: unknown): Record<string, string> {
  if (Array.isArray(value)) {
    return Object.fromEntries(
      value.map(String).map((entry) => {
        const at = entry.indexOf("=");
        return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, v === null ? "" : String(v)]));
  }
  return {};
}

/** `[ip:]host:container[/proto]` or `container[/proto]` (compose's short syntax). */
function portBindings(ports: unknown, problems: string[]) {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, { HostIp?: string; HostPort: string }[]> = {};
  for (const entry of Array.isArray(ports) ? ports : []) {
    const match = /^(?:(?:([\d.]+):)?(\d+):)?(\d+)(?:\/(tcp|udp))?$/.exec(String(entry));
    if (!match) {
      problems.push(`port "${String(entry)}" is not understood`);
      continue;
    }
    const [, ip, host, container, proto] = match;
    const key = `${container}/${proto ?? "tcp"}`;
    exposed[key] = {};
    if (host) bindings[key] = [...(bindings[key] ?? []), { ...(ip ? { HostIp: ip } : {}), HostPort: host }];
  }
  return { exposed, bindings };
}

function restartPolicy(value: unknown, problems: string[]): Docker.HostRestartPolicy {
  // balena's default is "always": a device's services come back after a crash or a reboot.
  const text = value === undefined ? "always" : String(value);
  const onFailure = /^on-failure(?::(\d+))?$/.exec(text);
  if (onFailure) return { Name: "on-failure", MaximumRetryCount: Number(onFailure[1] ?? 0) };
  if (text === "no" || text === "always" || text === "unless-stopped") return { Name: text };
  problems.push(`restart "${text}" is not understood, using "always"`);
  return { Name: "always" };
}

export const volumeName = (appUuid: string, name: string) => `${appUuid}_${name}`;
export const networkName = (appUuid: string, name: string) => `${appUuid}_${name}`;

/** The container for service `name` of the target release. */
export function serviceSpec(name: string, service: TargetService, context: ServiceContext): ServiceSpec {
  const compose = (service.composition ?? {}) as Compose;
  const problems: string[] = [];
  for (const key of Object.keys(compose)) {
    if (!APPLIED_KEYS.has(key))
      problems.push(`compose key "${key}" is not supported by this agent and was not applied`);
  }
  const image = service.image || (typeof compose.image === "string" ? compose.image : "");
  const environment = {
    // What the supervisor tells every service about where it runs.
    BALENA: "1",
    BALENA_APP_ID: String(context.appId),
    BALENA_APP_UUID: context.appUuid,
    BALENA_APP_NAME: context.appName,
    BALENA_SERVICE_NAME: name,
    BALENA_DEVICE_UUID: context.deviceUuid,
    BALENA_RELEASE_HASH: context.commit,
    ...keyValues(compose.environment),
    ...(service.environment ?? {}),
  };
  const labels = {
    ...keyValues(compose.labels),
    ...(service.labels ?? {}),
    [LABEL.supervised]: "true",
    [LABEL.appId]: String(context.appId),
    [LABEL.appUuid]: context.appUuid,
    [LABEL.serviceName]: name,
    [LABEL.serviceId]: String(service.id ?? 0),
    [LABEL.imageId]: String(service.image_id ?? 0),
    [LABEL.releaseId]: String(context.releaseId),
    [LABEL.commit]: context.commit,
  };
  const { exposed, bindings } = portBindings(compose.ports, problems);
  for (const port of Array.isArray(compose.expose) ? compose.expose : []) {
    exposed[String(port).includes("/") ? String(port) : `${port}/tcp`] = {};
  }
  const binds = [`${context.lockDir}:/tmp/balena`, `${context.lockDir}:/tmp/resin`];
  const volumes: string[] = [];
  for (const entry of Array.isArray(compose.volumes) ? compose.volumes.map(String) : []) {
    const [source, target, mode] = entry.split(":");
    if (!source || !target || source.startsWith("/") || source.startsWith(".")) {
      // As balena: host paths are not mounted from a compose file (only named volumes).
      problems.push(`volume "${entry}" is not a named volume and was not mounted`);
      continue;
    }
    const engineName = volumeName(context.appUuid, source);
    volumes.push(engineName);
    binds.push(`${engineName}:${target}${mode ? `:${mode}` : ""}`);
  }
  const networks = Array.isArray(compose.networks)
    ? compose.networks.map(String)
    : Object.keys((compose.networks as object | undefined) ?? {});
  const network = networkName(context.appUuid, networks[0] ?? "default");
  if (networks.length > 1) problems.push(`only the first network (${networks[0]}) is joined`);
  const create: Docker.ContainerCreateOptions = {
    name: `${name}_${service.image_id ?? 0}_${context.releaseId}_${context.commit.slice(0, 12)}`,
    Image: image,
    Env: Object.entries(environment).map(([key, value]) => `${key}=${value}`),
    Labels: labels,
    ExposedPorts: exposed,
    HostConfig: {
      Binds: binds,
      PortBindings: bindings,
      RestartPolicy: restartPolicy(compose.restart, problems),
      NetworkMode: network,
    },
    NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [name] } } },
  };
  const command = splitCommand(compose.command);
  const entrypoint = splitCommand(compose.entrypoint);
  if (command) create.Cmd = command;
  if (entrypoint) create.Entrypoint = entrypoint;
  if (typeof compose.working_dir === "string") create.WorkingDir = compose.working_dir;
  if (compose.user !== undefined) create.User = String(compose.user);
  if (typeof compose.hostname === "string") create.Hostname = compose.hostname;
  if (!image) problems.push("the target state names no image for this service");
  const dependsOn = Array.isArray(compose.depends_on)
    ? compose.depends_on.map(String)
    : Object.keys((compose.depends_on as object | undefined) ?? {});
  const hash = crypto.createHash("sha256").update(JSON.stringify(create)).digest("hex").slice(0, 32);
  create.Labels = { ...labels, [LABEL.configHash]: hash };
  return { name, image, create, volumes, dependsOn, problems, hash };
}

/** Services in an order where each comes after those it depends on (cycles: as given). */
export function startOrder(specs: ServiceSpec[]): ServiceSpec[] {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const done = new Set<string>();
  const ordered: ServiceSpec[] = [];
  const visit = (spec: ServiceSpec, path: Set<string>) => {
    if (done.has(spec.name) || path.has(spec.name)) return;
    path.add(spec.name);
    for (const dependency of spec.dependsOn) {
      const next = byName.get(dependency);
      if (next) visit(next, path);
    }
    done.add(spec.name);
    ordered.push(spec);
  };
  for (const spec of specs) visit(spec, new Set());
  return ordered;
}
