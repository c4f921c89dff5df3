import { pipeline, Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import tar from "tar-stream";
import YAML from "yaml";
import { FlotillaError } from "../../errors.ts";
import { byteCap } from "../../lib/byte-cap.ts";

/**
 * A pushed project (docs/releases.md "The builder"): the text files the builder reads from the
 * tar archive, and the composition they describe. Only what the build needs is kept in memory
 * (compose file, balena.yml, Dockerfiles); the rest of the archive is skipped as it streams by.
 */

/** Upload bound of a project archive. */
export const PROJECT_MAX_BYTES = 64 * 1024 * 1024;
/** Bound of the archive once unpacked: a small gzip bomb must not keep the server inflating for minutes. */
export const PROJECT_MAX_UNPACKED_BYTES = 256 * 1024 * 1024;
/** A text file the builder reads (compose, Dockerfile, balena.yml) is at most this large. */
const TEXT_FILE_MAX_BYTES = 256 * 1024;
const COMPOSE_FILES = ["docker-compose.yml", "docker-compose.yaml"];

export type ProjectFiles = Map<string, string>;

/** A pushed archive as read: its text files, and whether its single top directory was stripped. */
export type ReadProject = { files: ProjectFiles; stripTop: boolean };

export class ProjectError extends Error {}

/** `./a//b/` → `a/b`; refuses paths that climb out of the project. */
export function normalise(name: string): string | undefined {
  const parts = name.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) return undefined;
  return parts.join("/");
}

const isWanted = (name: string, dockerfile?: string) =>
  name === dockerfile ||
  COMPOSE_FILES.includes(name) ||
  name === "balena.yml" ||
  name === "balena.yaml" ||
  /(^|\/)Dockerfile[^/]*$/.test(name);

/**
 * The wanted text files of a tar (gzip or plain) stream. With `flatten`, a single top-level
 * directory holding everything is stripped (GitHub tarballs: `repo-main/…`).
 */
export async function readProject(
  source: Readable,
  {
    flatten = false,
    maxUnpackedBytes = PROJECT_MAX_UNPACKED_BYTES,
    dockerfile,
  }: { flatten?: boolean; maxUnpackedBytes?: number; dockerfile?: string } = {},
): Promise<ReadProject> {
  const wantedDockerfile = dockerfile === undefined ? undefined : normalise(dockerfile);
  const head = await peek(source, 2);
  const gzipped = head.bytes[0] === 0x1f && head.bytes[1] === 0x8b;
  const extract = tar.extract();
  const files: ProjectFiles = new Map();
  const tops = new Set<string>();
  const tooLarge = () =>
    new FlotillaError(
      "payload_too_large",
      `A project archive is at most ${maxUnpackedBytes / 1024 / 1024} MiB unpacked`,
    );
  const input = gzipped
    ? pipeline(head.stream, createGunzip(), byteCap(maxUnpackedBytes, tooLarge), () => {})
    : head.stream;
  input.on("error", (error) => extract.destroy(error));
  input.pipe(extract);
  try {
    for await (const entry of extract) {
      const name = normalise(entry.header.name);
      if (name) tops.add(name.split("/")[0] ?? "");
      if (
        name &&
        entry.header.type === "file" &&
        (isWanted(name, wantedDockerfile) || (flatten && isWanted(stripTop(name), wantedDockerfile)))
      ) {
        if ((entry.header.size ?? 0) > TEXT_FILE_MAX_BYTES) {
          throw new ProjectError(`${name} is larger than ${TEXT_FILE_MAX_BYTES / 1024} KiB`);
        }
        const chunks: Buffer[] = [];
        for await (const chunk of entry) chunks.push(chunk as Buffer);
        files.set(name, Buffer.concat(chunks).toString("utf8"));
      } else {
        entry.resume();
      }
    }
  } catch (error) {
    if (error instanceof ProjectError || error instanceof FlotillaError) throw error;
    throw new ProjectError(error instanceof Error ? error.message : String(error));
  }
  if (!flatten || tops.size !== 1) return { files, stripTop: false };
  // Only a single top directory is flattened (balena's shouldFlatten).
  return { files: new Map([...files].map(([name, text]) => [stripTop(name), text])), stripTop: true };
}

export const stripTop = (name: string) => name.split("/").slice(1).join("/");

/** The first bytes of a stream, and a stream that still yields them. */
async function peek(source: Readable, count: number): Promise<{ bytes: Buffer; stream: Readable }> {
  const iterator = source[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let length = 0;
  while (length < count) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.from(next.value as Buffer);
    chunks.push(chunk);
    length += chunk.length;
  }
  async function* rest() {
    yield* chunks;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value as Buffer;
  }
  if (length === 0) throw new ProjectError("the archive is empty");
  return { bytes: Buffer.concat(chunks), stream: Readable.from(rest()) };
}

/** One service of the composition, as the builder records it. */
export type ServiceSpec = {
  name: string;
  /** Prebuilt image reference, or undefined when the service is built. */
  image: string | undefined;
  /** Build context, Dockerfile path (both relative to the project) and build args when the service is built. */
  build: { context: string; dockerfile: string; args: Record<string, string> } | undefined;
  labels: Record<string, string>;
  environment: Record<string, string>;
};

export type Project = {
  /** The composition stored on the release (services, networks, volumes). */
  composition: Record<string, unknown>;
  services: ServiceSpec[];
  /** Semver from balena.yml `version`, when given. */
  version: { major: number; minor: number; patch: number; prerelease: string } | undefined;
  /** Dockerfile texts by service name. */
  dockerfiles: Map<string, string>;
};

const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;
const SEMVER =
  /^v?(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-([0-9A-Za-z.-]{1,100}))?(?:\+[0-9A-Za-z.-]*)?$/;

/** Compose `labels`/`environment`: a map, or a list of `KEY=value`. */
function keyValues(value: unknown, what: string, service: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  const out: Record<string, string> = {};
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== "string") throw new ProjectError(`service "${service}": ${what} entries must be strings`);
      const at = item.indexOf("=");
      if (at === 0) throw new ProjectError(`service "${service}": ${what} entry "${item}" has no name`);
      if (at < 0) out[item] = "";
      else out[item.slice(0, at)] = item.slice(at + 1);
    }
    return out;
  }
  if (typeof value !== "object") throw new ProjectError(`service "${service}": ${what} must be a map or a list`);
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item !== null && typeof item === "object") {
      throw new ProjectError(`service "${service}": ${what} "${key}" must be a string`);
    }
    out[key] = item === null || item === undefined ? "" : String(item);
  }
  return out;
}

const joinPath = (...parts: string[]) => normalise(parts.join("/")) ?? "";

/** The composition of a project: its compose file, or a single Dockerfile as the service `main`. */
export function parseProject(files: ProjectFiles, dockerfilePath?: string): Project {
  const version = parseVersion(files);
  const composeName = COMPOSE_FILES.find((name) => files.has(name));
  if (!composeName) {
    const dockerfileName = dockerfilePath ? normalise(dockerfilePath) : "Dockerfile";
    if (!dockerfileName) throw new ProjectError(`dockerfilePath "${dockerfilePath}" is not a path inside the project`);
    const dockerfile = files.get(dockerfileName);
    if (dockerfile === undefined) {
      throw new ProjectError(
        dockerfilePath
          ? `${dockerfileName} (dockerfilePath) is not in the project`
          : "no docker-compose.yml or Dockerfile at the top of the project",
      );
    }
    return {
      composition: {
        version: "2.1",
        services: { main: { build: dockerfilePath ? { context: ".", dockerfile: dockerfileName } : { context: "." } } },
      },
      services: [
        {
          name: "main",
          image: undefined,
          build: { context: ".", dockerfile: dockerfileName, args: {} },
          labels: {},
          environment: {},
        },
      ],
      version,
      dockerfiles: new Map([["main", dockerfile]]),
    };
  }
  let document: unknown;
  try {
    document = YAML.parse(files.get(composeName) ?? "", { maxAliasCount: 100 });
  } catch (error) {
    throw new ProjectError(`${composeName}: ${(error as Error).message.split("\n")[0]}`);
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw new ProjectError(`${composeName}: the file must be a map with "services"`);
  }
  const compose = document as Record<string, unknown>;
  const rawServices = compose.services;
  if (rawServices === null || typeof rawServices !== "object" || Array.isArray(rawServices)) {
    throw new ProjectError(`${composeName}: "services" must be a map of services`);
  }
  const entries = Object.entries(rawServices as Record<string, unknown>);
  if (entries.length === 0) throw new ProjectError(`${composeName}: there are no services`);
  const services: ServiceSpec[] = [];
  const dockerfiles = new Map<string, string>();
  for (const [name, raw] of entries) {
    if (!SERVICE_NAME.test(name)) throw new ProjectError(`service name "${name}" is not valid`);
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      throw new ProjectError(`service "${name}" must be a map`);
    }
    const service = raw as Record<string, unknown>;
    const image = service.image;
    if (image !== undefined && (typeof image !== "string" || image.trim() === "")) {
      throw new ProjectError(`service "${name}": image must be an image reference`);
    }
    let build: ServiceSpec["build"];
    if (service.build !== undefined) {
      const spec = typeof service.build === "string" ? { context: service.build } : service.build;
      if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
        throw new ProjectError(`service "${name}": build must be a path or a map`);
      }
      const {
        context = ".",
        dockerfile = "Dockerfile",
        args,
      } = spec as { context?: unknown; dockerfile?: unknown; args?: unknown };
      if (typeof context !== "string" || typeof dockerfile !== "string") {
        throw new ProjectError(`service "${name}": build context and dockerfile must be paths`);
      }
      build = {
        context: joinPath(context) || ".",
        dockerfile: joinPath(context, dockerfile),
        args: keyValues(args, "build args", name),
      };
      const text = files.get(build.dockerfile);
      if (text !== undefined) dockerfiles.set(name, text);
    }
    if (image === undefined && build === undefined) {
      throw new ProjectError(`service "${name}" needs an image or a build`);
    }
    services.push({
      name,
      // A service with both is built and tagged with the image name: it still needs a build.
      image: build ? undefined : (image as string),
      build,
      labels: keyValues(service.labels, "labels", name),
      environment: keyValues(service.environment, "environment", name),
    });
  }
  return { composition: compose, services, version, dockerfiles };
}

function parseVersion(files: ProjectFiles): Project["version"] {
  const text = files.get("balena.yml") ?? files.get("balena.yaml");
  if (text === undefined) return undefined;
  let contract: unknown;
  try {
    contract = YAML.parse(text);
  } catch (error) {
    throw new ProjectError(`balena.yml: ${(error as Error).message.split("\n")[0]}`);
  }
  const version = (contract as { version?: unknown } | null)?.version;
  if (version === undefined || version === null) return undefined;
  const match = SEMVER.exec(String(version));
  if (!match) throw new ProjectError(`balena.yml: version "${String(version)}" is not a semantic version`);
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), prerelease: match[4] ?? "" };
}
