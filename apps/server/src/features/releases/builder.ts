import crypto from "node:crypto";
import { RELEASE_TEXTS } from "@flotilla/domain";
import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../../db/index.ts";
import { type Project, ProjectError, type ProjectFiles, parseProject } from "./project.ts";
import {
  appendReleaseLog,
  createRelease,
  createReleaseImage,
  finishImage,
  finishRelease,
  type ReleaseOutcome,
} from "./queries.ts";

/**
 * The release builder (docs/releases.md): turns a pushed project into a release, one service
 * and image per composition service, with a build log that the pusher sees as it is written.
 * Prebuilt images (`image:`) are recorded as they are; services that need `docker build` fail
 * with "no builder configured", since this server has no Docker engine to build with.
 */

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
  /** Set when the pusher went away: the build stops as cancelled. */
  signal?: AbortSignal;
};

type Db = Pick<Queryable, "query">;

export async function runBuild(
  db: Db,
  log: FastifyBaseLogger,
  input: BuildInput,
  emit: (event: BuildEvent) => void,
): Promise<BuildEvent & { type: "status" }> {
  const commit = crypto.randomBytes(16).toString("hex");
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
  try {
    outcome = await build(db, input, release, write);
  } catch (error) {
    log.error({ err: error, release }, "release build failed unexpectedly");
    await write(`error: ${RELEASE_TEXTS.build_failed} (internal error)`).catch(() => undefined);
  }
  const { raw_version } = await finishRelease(db, release, outcome);
  const status = { type: "status" as const, status: outcome.status, id: release, commit, raw_version };
  emit(status);
  return status;
}

async function build(
  db: Db,
  input: BuildInput,
  release: number,
  write: (message: string, service?: { name: string; image: number }) => Promise<void>,
): Promise<ReleaseOutcome> {
  const final = !input.draft;
  let project: Project;
  try {
    project = parseProject(input.files);
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
  for (const service of project.services) {
    if (input.signal?.aborted) return cancelled(write, composition, version);
    const dockerfile = project.dockerfiles.get(service.name);
    const location = service.image ?? `flotilla.local/${input.fleet}/${service.name}:${release}`;
    const image = await createReleaseImage(db, { fleet: input.fleet, release, service, location, dockerfile });
    const at = { name: service.name, image };
    if (service.image) {
      await write(`Using prebuilt image ${service.image}`, at);
      await finishImage(db, image, { status: "success" });
      continue;
    }
    failed = true;
    const problem =
      dockerfile === undefined
        ? `Dockerfile not found: ${service.build?.dockerfile}`
        : "no builder configured: this server cannot run docker build; use prebuilt images (image:)";
    await write(`error: ${problem}`, at);
    await finishImage(db, image, { status: "failed", error: problem });
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
