import crypto from "node:crypto";
import path from "node:path";
import { BUILD_TIMEOUT_MS, RELEASE_TEXTS } from "@flotilla/domain";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.ts";
import type { Queryable } from "../../db/index.ts";
import { claimRepository, newImageLocation } from "../registry/access.ts";
import { loadRegistryKeys, type RegistryKeys } from "../registry/keys.ts";
import { BUILDER_USERNAME, signBuilderCredential } from "../registry/tokens.ts";
import { contextTar, type ProjectArchive } from "./archive.ts";
import { connectEngine, type ImageEngine } from "./image-engine.ts";
import { type Project, ProjectError, type ProjectFiles, parseProject, type ServiceSpec } from "./project.ts";
import {
  appendReleaseLog,
  createRelease,
  createReleaseImage,
  finishImage,
  finishRelease,
  fleetBuildVariables,
  type ReleaseOutcome,
  touchRelease,
} from "./queries.ts";

/**
 * The release builder (docs/releases.md): turns a pushed project into a release, one service
 * and image per composition service, with a build log that the pusher sees as it is written.
 * With an image builder (FLOTILLA_BUILDER), `build:` services are built on its engine and pushed
 * to the registry, and so are `image:` services when mirroring; the release records each image's
 * registry location, digest and size. Without one, prebuilt images are recorded as they are and
 * `build:` services fail with "no builder configured".
 */

/** The engine that builds, and what pushing to the registry needs. */
export type Builder = { engine: ImageEngine; registryHost: string; keys: RegistryKeys; mirror: boolean };

/** The configured image builder (FLOTILLA_BUILDER with FLOTILLA_REGISTRY_URL), or none. */
export function configuredBuilder(config: Pick<Config, "builder" | "registry" | "dataDir">): Builder | undefined {
  const { builder, registry } = config;
  if (!builder || !registry) return undefined;
  return {
    engine: connectEngine(builder.engine),
    registryHost: registry.host,
    keys: loadRegistryKeys(config),
    mirror: builder.mirror,
  };
}

export type BuildEvent =
  | { type: "release"; id: number; commit: string }
  | { type: "log"; message: string; service?: string }
  | { type: "status"; status: ReleaseOutcome["status"]; id: number; commit: string; raw_version: string };

export type BuildInput = {
  fleet: number;
  user: number | undefined;
  files: ProjectFiles;
  draft: boolean;
  note: string | undefined;
  /** The release's commit: a git push's pushed commit; otherwise 32 random hex digits. */
  commit?: string;
  /** The Dockerfile of a project without a compose file (balena's dockerfilePath); `Dockerfile` by default. */
  dockerfile?: string;
  /** The archive on disk, for build contexts. */
  archive?: ProjectArchive;
  builder?: Builder;
  /** Set when the pusher went away: the build stops as cancelled. */
  signal?: AbortSignal;
};

type Write = (message: string, service?: { name: string; image: number }) => Promise<void>;

type Db = Pick<Queryable, "query">;

export async function runBuild(
  db: Db,
  log: Pick<FastifyBaseLogger, "error">,
  input: BuildInput,
  emit: (event: BuildEvent) => void,
): Promise<BuildEvent & { type: "status" }> {
  const commit = input.commit ?? crypto.randomBytes(16).toString("hex");
  const release = await createRelease(db, {
    fleet: input.fleet,
    commit,
    user: input.user,
    note: input.note,
    source: "cloud",
  });
  emit({ type: "release", id: release, commit });
  const write = async (message: string, service?: { name: string; image: number }) => {
    const line = service ? `[${service.name}] ${message}` : message;
    await appendReleaseLog(db, release, `${line}\n`, service?.image);
    emit({ type: "log", message: line, ...(service ? { service: service.name } : {}) });
  };
  let outcome: ReleaseOutcome = { status: "error", composition: undefined, version: undefined, final: false };
  // A build step may print nothing for minutes: only a build whose server died goes stale.
  const alive = setInterval(() => touchRelease(db, release).catch(() => undefined), BUILD_TIMEOUT_MS / 4);
  try {
    outcome = await build(db, input, release, write);
  } catch (error) {
    log.error({ err: error, release }, "release build failed unexpectedly");
    await write(`error: ${RELEASE_TEXTS.build_failed} (internal error)`).catch(() => undefined);
  } finally {
    clearInterval(alive);
  }
  const { raw_version } = await finishRelease(db, release, outcome);
  const status = { type: "status" as const, status: outcome.status, id: release, commit, raw_version };
  emit(status);
  return status;
}

async function build(db: Db, input: BuildInput, release: number, write: Write): Promise<ReleaseOutcome> {
  const final = !input.draft;
  let project: Project;
  try {
    project = parseProject(input.files, input.dockerfile);
  } catch (error) {
    if (!(error instanceof ProjectError)) throw error;
    await write(`error: ${error.message}`);
    await write(RELEASE_TEXTS.build_failed);
    return { status: "failed", composition: undefined, version: undefined, final };
  }
  const { composition, version } = project;
  const names = project.services.map((service) => service.name).join(", ");
  await write(`Building release for ${project.services.length} service(s): ${names}`);
  let failed = false;
  // The fleet's build variables are every build's arguments; a compose file's own args win.
  const buildVariables = input.builder ? await fleetBuildVariables(db, input.fleet) : {};
  for (const service of project.services) {
    if (input.signal?.aborted) return cancelled(write, composition, version);
    const dockerfile = project.dockerfiles.get(service.name);
    const builder = input.builder;
    const inRegistry = builder && (service.build || builder.mirror);
    const location = inRegistry
      ? newImageLocation(builder.registryHost)
      : (service.image ?? `flotilla.local/${input.fleet}/${service.name}:${release}`);
    const image = await createReleaseImage(db, { fleet: input.fleet, release, service, location, dockerfile });
    if (inRegistry) await claimRepository(db, image);
    const at = { name: service.name, image };
    if (service.image && !inRegistry) {
      await write(`Using prebuilt image ${service.image}`, at);
      await finishImage(db, image, { status: "success" });
      continue;
    }
    const problem =
      service.build && dockerfile === undefined
        ? `Dockerfile not found: ${service.build.dockerfile}`
        : !builder
          ? "no builder configured: this server cannot run docker build; use prebuilt images (image:)"
          : undefined;
    const outcome = problem
      ? { status: "failed" as const, error: problem }
      : await buildImage(builder as Builder, input, service, location, buildVariables, (line) => write(line, at));
    if (outcome.status === "failed") {
      failed = true;
      await write(`error: ${outcome.error}`, at);
    }
    await finishImage(db, image, outcome);
    if (outcome.status === "cancelled") return cancelled(write, composition, version);
  }
  if (input.signal?.aborted) return cancelled(write, composition, version);
  if (failed) {
    await write(RELEASE_TEXTS.build_failed);
    return { status: "failed", composition, version, final };
  }
  await write(final ? "Release created" : "Draft release created");
  return { status: "success", composition, version, final };
}

async function cancelled(
  write: (message: string) => Promise<void>,
  composition: Record<string, unknown>,
  version: Project["version"],
): Promise<ReleaseOutcome> {
  await write(RELEASE_TEXTS.build_cancelled);
  return { status: "cancelled", composition, version, final: false };
}

/**
 * Builds (or, for a mirrored `image:` service, pulls) one service's image on the builder's engine
 * and pushes it to its registry repository; the engine's lines go to the build log as they come.
 */
async function buildImage(
  builder: Builder,
  input: BuildInput,
  service: ServiceSpec,
  location: string,
  buildVariables: Record<string, string>,
  log: (line: string) => Promise<void>,
): Promise<{ status: "success" | "failed" | "cancelled"; error?: string; size?: number; contentHash?: string }> {
  const { engine } = builder;
  const tagged = `${location}:latest`;
  // Engine lines arrive faster than the log is written: keep their order.
  let written = Promise.resolve();
  const queue = (line: string) => {
    written = written.then(() => log(line));
  };
  try {
    if (service.build) {
      const context = service.build.context;
      const dockerfile = path.posix.relative(context === "." ? "" : context, service.build.dockerfile);
      if (dockerfile.startsWith("../")) {
        return {
          status: "failed",
          error: `the Dockerfile ${service.build.dockerfile} is outside the build context ${context}`,
        };
      }
      if (!input.archive) throw new Error("a build needs the project archive");
      await log("Building image");
      await engine.build(
        contextTar(input.archive, context),
        { tag: tagged, dockerfile, buildargs: { ...buildVariables, ...service.build.args } },
        queue,
        input.signal,
      );
    } else {
      const source = service.image as string;
      await log(`Copying image ${source} to the registry`);
      await engine.pull(source, queue);
      await engine.tag(source, location, "latest");
    }
    await written;
    if (input.signal?.aborted) return { status: "cancelled" };
    await log("Pushing image to the registry");
    const repository = location.slice(builder.registryHost.length + 1);
    const password = await signBuilderCredential(builder.keys, repository);
    const contentHash = await engine.push(location, "latest", {
      username: BUILDER_USERNAME,
      password,
      serveraddress: builder.registryHost,
    });
    const size = await engine.size(tagged);
    await log(`Image ${contentHash} pushed (${formatSize(size)})`);
    return { status: "success", size, contentHash };
  } catch (error) {
    await written.catch(() => undefined);
    if (input.signal?.aborted) return { status: "cancelled" };
    return { status: "failed", error: engineMessage(error) };
  } finally {
    await engine.untag(tagged);
  }
}

/** The engine's own words for a failure (dockerode puts its JSON body's message in `json`). */
function engineMessage(error: unknown): string {
  const json = (error as { json?: { message?: unknown } }).json;
  if (json && typeof json.message === "string") return json.message.trim();
  const message = error instanceof Error ? error.message : String(error);
  if ((error as NodeJS.ErrnoException).code === "ECONNREFUSED" || (error as NodeJS.ErrnoException).code === "ENOENT") {
    return `the image builder cannot be reached (FLOTILLA_BUILDER): ${message}`;
  }
  return message;
}

function formatSize(bytes: number): string {
  const mib = bytes / 1024 / 1024;
  return mib >= 1 ? `${mib.toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}
