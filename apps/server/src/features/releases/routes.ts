import fs from "node:fs";
import { Readable, Transform } from "node:stream";
import { APP_VERSION } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { fetchAllowList, OutboundFetchError, outboundFetch } from "../../lib/outbound-fetch.ts";
import { loadSecret } from "../../lib/secret.ts";
import { mayDo } from "../data-api/actions.ts";
import { odataAs } from "../data-api/routes.ts";
import { type ProjectArchive, removeArchive, spoolArchive } from "./archive.ts";
import { createAssetLinks } from "./asset-links.ts";
import { assetUploads } from "./asset-uploads.ts";
import { assetFile } from "./assets.ts";
import { builderMessages, jsonArrayWriter } from "./balena-build-stream.ts";
import { type BuildEvent, type BuildInput, configuredBuilder, runBuild } from "./builder.ts";
import { PROJECT_MAX_BYTES, ProjectError, type ProjectFiles, readProject } from "./project.ts";
import { closeStalledBuilds, findFleet, findReleaseAsset, type StoredAsset } from "./queries.ts";
import { rollOut } from "./rollout.ts";

/** Downloading a project from a URL (redirects and body included) may take this long. */
const URL_DOWNLOAD_TIMEOUT_MS = 60_000;
/** How often running builds are checked for BUILD_TIMEOUT_MS without progress. */
const STALLED_BUILD_SWEEP_MS = 15_000;
const ARCHIVE_TYPES = [
  "application/x-tar",
  "application/tar",
  "application/gzip",
  "application/x-gzip",
  "application/octet-stream",
];

const flag = z.enum(["true", "false"]).optional();
/**
 * Our CLI names the fleet by `app` (an id, or a name with `owner`); balena-cli by
 * `slug={org}/{fleet}` with its own flags (`isdraft`, `headless`, …), and expects balena's stream.
 */
const buildQuery = z
  .object({
    app: z.string().min(1).max(300).optional(),
    owner: z.string().min(1).max(300).optional(),
    slug: z
      .string()
      .max(601)
      .regex(/^[^/]+\/[^/]+$/, "slug must read {organization}/{fleet}")
      .optional(),
    draft: flag,
    isdraft: flag,
    message: z.string().max(10_000).optional(),
    headless: flag,
    dockerfilePath: z.string().max(1000).optional(),
    // Accepted for balena-cli and without effect here: builds run on the builder's own engine.
    emulated: flag,
    nocache: flag,
  })
  .refine((query) => query.app !== undefined || query.slug !== undefined, {
    message: "The build needs slug ({organization}/{fleet}), or app (a fleet id, or a name with owner)",
  });

const urlBody = z.object({ url: z.string().max(2000), shouldFlatten: z.boolean().optional() });

/** Counts the bytes of an upload and stops it beyond the bound. */
function bounded(limit: number) {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(new FlotillaError("payload_too_large", "A project archive is at most 64 MiB"));
      else done(null, chunk);
    },
  });
}

/**
 * The builder endpoints (docs/releases.md): `POST /v3/build` streams a pushed project's build as
 * NDJSON; `POST /v3/buildFromUrl` (balena-sdk `release.createFromUrl`) builds a tarball from a
 * URL in the background. Release asset files are read at `GET /release-asset/v1/{id}/download`.
 */
export async function releaseRoutes(app: FastifyInstance, ctx: AppContext) {
  // Every instance sweeps; the update only takes builds still running, so sweeps never collide.
  const sweeper = setInterval(() => {
    closeStalledBuilds(ctx.db).catch((error) => app.log.warn({ err: error }, "closing stalled builds failed"));
  }, STALLED_BUILD_SWEEP_MS);
  sweeper.unref();
  app.addHook("onClose", () => clearInterval(sweeper));
  const fetchAllow = fetchAllowList(ctx.config.fetchAllow);
  const builder = configuredBuilder(ctx.config);
  // The archive reaches the handler as a stream (bounded there), never buffered by Fastify.
  app.addContentTypeParser(ARCHIVE_TYPES, (_request, payload, done) => done(null, payload));
  // balena-cli sends the gzipped tar with no Content-Type at all (Content-Encoding: gzip only).
  // Scoped to these routes: JSON bodies keep their own parser.
  app.addContentTypeParser("*", (_request, payload, done) => done(null, payload));

  /** The fleet a build goes to, checked for the pusher: 404 when unreadable, 403 without push rights. */
  async function fleetToBuild(request: FastifyRequest) {
    const user = requireUser(request);
    const parsed = buildQuery.safeParse(request.query ?? {});
    if (!parsed.success) throw new FlotillaError("bad_request", parsed.error.issues[0]?.message);
    const { slug } = parsed.data;
    const [owner, name] = slug ? slug.split("/") : [parsed.data.owner, parsed.data.app ?? ""];
    const fleet = await findFleet(ctx.db, name ?? "", owner);
    const label = slug ?? (owner ? `${owner}/${name}` : name);
    if (!fleet || !(await mayDo(ctx.db, user.caller, "application.read", { fleet: fleet.id }))) {
      throw new FlotillaError("not_found", `Fleet not found: ${label}`);
    }
    if (!(await mayDo(ctx.db, user.caller, "application.push", { fleet: fleet.id }))) {
      throw new FlotillaError("forbidden", "You are not allowed to push releases to this fleet");
    }
    return { fleet, user, query: parsed.data };
  }

  /**
   * Keeps the archive on disk for the build contexts and reads its project; the caller removes
   * the archive after the build (here when it cannot be read).
   */
  async function projectOf(
    source: Readable,
    flatten: boolean,
    dockerfile?: string,
  ): Promise<{ files: ProjectFiles; archive: ProjectArchive }> {
    const file = await spoolArchive(source.pipe(bounded(PROJECT_MAX_BYTES)), ctx.config.dataDir);
    try {
      const { files, stripTop } = await readProject(fs.createReadStream(file), {
        flatten,
        ...(dockerfile ? { dockerfile } : {}),
      });
      return { files, archive: { file, stripTop } };
    } catch (error) {
      removeArchive(file);
      if (error instanceof FlotillaError) throw error;
      if (error instanceof ProjectError) {
        throw new FlotillaError("build_upload_invalid", undefined, { params: { message: error.message } });
      }
      throw error;
    }
  }

  /** After a build: tracking fleets move to a new final release, and their devices hear of it. */
  async function releaseBuilt(fleet: number, status: BuildEvent & { type: "status" }) {
    if (status.status === "success") await rollOut(ctx.db, ctx.devices, (task) => task(), { fleets: [fleet] });
  }

  app.post("/v3/build", async (request, reply) => {
    const { fleet, user, query } = await fleetToBuild(request);
    if (!(request.body instanceof Readable)) {
      throw new FlotillaError("unsupported_media_type", "Send the project as application/x-tar (gzip allowed)");
    }
    const { files, archive } = await projectOf(request.body, false, query.dockerfilePath).catch((error: unknown) => {
      // Refused mid-upload (too large, not a project): close the connection so the client stops sending.
      reply.header("connection", "close");
      throw error;
    });
    const balena = query.slug !== undefined;
    const input = {
      fleet: fleet.id,
      user: user.id,
      files,
      archive,
      ...(builder ? { builder } : {}),
      draft: (balena ? query.isdraft : query.draft) === "true",
      note: query.message,
      ...(query.dockerfilePath ? { dockerfile: query.dockerfilePath } : {}),
    };
    if (balena && query.headless === "true") {
      // balena-cli --detached: one JSON object once the release exists; the build goes on alone.
      return { started: true, releaseId: await buildInBackground(request, fleet.id, input) };
    }
    const aborted = new AbortController();
    reply.raw.on("close", () => {
      if (!reply.raw.writableFinished) aborted.abort();
    });
    reply.hijack();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": balena ? "application/json; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "cache-control": "no-store",
    });
    const write = (text: string) => {
      if (!reply.raw.destroyed) reply.raw.write(text);
    };
    const array = jsonArrayWriter(write);
    const names = { fleet: `${fleet.handle}/${fleet.app_name}`, user: user.username };
    const emit = balena
      ? (event: BuildEvent) => {
          for (const message of builderMessages(event, names)) array.message(message);
        }
      : (event: BuildEvent) => write(`${JSON.stringify(event)}\n`);
    try {
      const status = await runBuild(ctx.db, request.log, { ...input, signal: aborted.signal }, emit);
      await releaseBuilt(fleet.id, status);
    } finally {
      removeArchive(archive.file);
      if (balena) array.end();
      reply.raw.end();
    }
  });

  /** Starts a build that outlives the request; answers its release id once the release exists. */
  function buildInBackground(request: FastifyRequest, fleet: number, input: BuildInput): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      runBuild(ctx.db, request.log, input, (event) => event.type === "release" && resolve(event.id))
        .then((status) => releaseBuilt(fleet, status))
        .catch((error) => {
          request.log.error({ err: error }, "background build failed");
          reject(error); // only heard when the release could not even be created
        })
        .finally(() => input.archive && removeArchive(input.archive.file));
    });
  }

  app.post("/v3/buildFromUrl", async (request) => {
    const { fleet, user, query } = await fleetToBuild(request);
    const parsed = urlBody.safeParse(request.body ?? {});
    const url = parsed.success ? safeUrl(parsed.data.url) : undefined;
    if (!parsed.success || !url) throw new FlotillaError("build_url_invalid");
    let project: { files: ProjectFiles; archive: ProjectArchive };
    // A download that fails mid-body reaches the project reader as a stream error: remember it.
    let bodyFailure: OutboundFetchError | undefined;
    try {
      const response = await outboundFetch(url, {
        allow: fetchAllow,
        timeoutMs: URL_DOWNLOAD_TIMEOUT_MS,
        maxBytes: PROJECT_MAX_BYTES,
        accept: ARCHIVE_TYPES.join(", "),
      });
      if (response.status < 200 || response.status > 299) {
        response.body.destroy();
        throw new OutboundFetchError(`answered ${response.status}`);
      }
      response.body.on("error", (error) => {
        if (error instanceof OutboundFetchError) bodyFailure = error;
      });
      project = await projectOf(response.body, parsed.data.shouldFlatten ?? true);
    } catch (error) {
      const cause = error instanceof OutboundFetchError ? error : (bodyFailure ?? error);
      if (cause instanceof OutboundFetchError) {
        request.log.warn({ url, detail: cause.detail }, "build from URL: the project could not be downloaded");
        // One text for every failure: the answer tells nothing of what is behind the URL.
        return { started: false, message: "Could not download the project from this URL." };
      }
      if (error instanceof FlotillaError && error.code !== "build_upload_invalid") throw error;
      return { started: false, message: `Could not read the project at this URL: ${(error as Error).message}` };
    }
    // Answers once the release exists; the build goes on without the caller.
    const releaseId = await buildInBackground(request, fleet.id, {
      fleet: fleet.id,
      user: user.id,
      ...project,
      ...(builder ? { builder } : {}),
      draft: query.draft === "true",
      note: query.message,
    });
    return { started: true, releaseId };
  });

  // The CLI's package metadata (spec 2 §7): the add-release dialog reads the version offered,
  // without a token. The CLI ships with the server and carries its version.
  app.get("/cli/package.json", { config: { public: true } }, async () => ({
    name: "flotilla",
    version: APP_VERSION,
    description: "The Flotilla command line: login, push and deploy releases",
    bin: { flotilla: "apps/cli/bin/flotilla.mjs" },
  }));

  const links = createAssetLinks(loadSecret(ctx.config), ctx.config.apiUrl);
  const uploads = assetUploads({ dataDir: ctx.config.dataDir, links });

  // The asset's `href` (asset-links.ts): signed, it needs no token until it expires; unsigned,
  // the bearer's right to read the asset.
  app.get("/release-asset/v1/:id/download", { config: { guest: true } }, async (request, reply) => {
    const raw = (request.params as { id: string }).id;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    const query = request.query as { expires?: string; signature?: string };
    let row: StoredAsset | undefined;
    const signed = query.signature !== undefined || query.expires !== undefined;
    const verdict = signed ? links.check(`/release-asset/v1/${raw}/download`, query) : undefined;
    // A bearer who may read the asset still gets it by a stale link (a dashboard list kept open).
    if (signed && verdict !== "valid" && !request.auth) {
      if (verdict === "expired") throw new FlotillaError("forbidden", "This release asset link has expired");
      throw new FlotillaError("forbidden", "This release asset link is not valid");
    }
    if (verdict === "valid") {
      row = await findReleaseAsset(ctx.db, Number(raw));
    } else {
      const caller = requireUser(request).caller;
      const read = await odataAs(ctx, caller, { method: "GET", url: `/v7/release_asset(${raw})?$select=id` });
      if ((read.body as { d?: unknown[] }).d?.length) row = await findReleaseAsset(ctx.db, Number(raw));
    }
    const file = row?.asset ? await assetFile(ctx.config.dataDir, Number(raw)) : undefined;
    if (!row?.asset || !file) throw new FlotillaError("not_found", "Release asset not found");
    const filename = (row.asset.filename ?? "asset").replace(/[^\w.-]/g, "_");
    return reply
      .type(row.asset.content_type ?? "application/octet-stream")
      .header("content-disposition", `attachment; filename="${filename}"`)
      .header("x-content-type-options", "nosniff")
      .send(fs.createReadStream(file));
  });

  // A part of a multipart asset upload (asset-uploads.ts), PUT to its signed link without a token.
  app.put("/release-asset/v1/uploads/:uuid/parts/:part", { config: { public: true } }, async (request, reply) => {
    const { uuid, part } = request.params as { uuid: string; part: string };
    if (!/^[0-9a-f-]{36}$/.test(uuid) || !/^\d{1,5}$/.test(part)) throw new FlotillaError("not_found");
    uploads.checkPartLink(uuid, part, request.query as Record<string, string>);
    if (!(request.body instanceof Readable)) {
      throw new FlotillaError(
        "unsupported_media_type",
        "Send the part's bytes as the body, e.g. application/octet-stream",
      );
    }
    const etag = await uploads.putPart(uuid, Number(part), request.body);
    return reply.header("etag", `"${etag}"`).code(200).send();
  });
}

function safeUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}
