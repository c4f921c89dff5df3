import { pipeline, type Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { createGunzip } from "node:zlib";
import { CLOUDLINK_ATTEMPT_HEADER, parseCloudlinkAttempt } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { byteCap } from "../../lib/byte-cap.ts";
import { DEVICE_ONLY } from "../../lib/device-only.ts";
import { parseInput } from "../../lib/validation.ts";
import { mayDo } from "../data-api/actions.ts";
import { parseLogLine } from "./device-logs.ts";
import { deviceLogRoutes } from "./log-routes.ts";
import { logSearchRoutes } from "./log-search-routes.ts";
import { deviceByUuid, fleetStateFacts, isDeviceOfFleet } from "./queries.ts";
import { STATE_REPORT_BODY_LIMIT, stateReportBody } from "./state-report.ts";
import { createTargetStatesV2 } from "./state-v2.ts";
import { supervisorCompatRoutes } from "./supervisor-compat-routes.ts";
import { buildFleetState } from "./target-state.ts";

/** `?releaseUuid=` empty is no release asked (balena answers the fleet's target then). */
const fleetStateQuery = z.object({
  releaseUuid: z
    .string()
    .max(64)
    .optional()
    .transform((value) => value || undefined),
});

/** A log line longer than this (JSON, before the message is cut) is dropped whole. */
const MAX_RAW_LOG_LINE = 256 * 1024;
const CLOUDLINK_PING_MS = 20_000;
/**
 * One log-stream request carries at most this much, as sent and as unpacked; the agent ends its
 * stream when idle and opens a new one after a failure, so a chatty device just reconnects.
 */
const LOG_STREAM_MAX_MIB = 16;
const LOG_STREAM_MAX_BYTES = LOG_STREAM_MAX_MIB * 1024 * 1024;

const deviceNotFound = (uuid: string) => new FlotillaError("device_not_found", undefined, { params: { device: uuid } });

/**
 * The device-facing API (docs/device-protocol.md): target state, current state, log stream and
 * cloudlink. Thin handlers over the device services of the context.
 */
export async function deviceRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, devices } = ctx;
  const { identities } = devices;

  const v2Of = createTargetStatesV2();
  /**
   * Target state, v3 or (for Supervisors up to v12, and balena-sdk's getSupervisorTargetState
   * default) v2; users who may read the device get it too.
   */
  const targetState =
    (version: 2 | 3) => async (request: FastifyRequest<{ Params: { uuid: string } }>, reply: FastifyReply) => {
      const { uuid } = request.params;
      const device = await identities.maybe(request);
      if (device) {
        if (device.uuid !== uuid) throw new FlotillaError("unauthorized");
      } else {
        const caller = requireAuth(request);
        const target = caller.user ? await deviceByUuid(db, uuid) : undefined;
        if (!target || !(await mayDo(db, caller, "device.read", { device: target.id }))) throw deviceNotFound(uuid);
      }
      const state = await devices.targetStates.get(uuid);
      if (!state) throw deviceNotFound(uuid);
      if (device) devices.heartbeat.seen(device.id, state.pollIntervalMs);
      const { body, etag } = version === 3 ? state : v2Of(state);
      reply.header("etag", etag).header("cache-control", "no-cache");
      const ifNoneMatch = request.headers["if-none-match"];
      if (ifNoneMatch?.split(",").some((tag) => tag.trim() === etag)) return reply.code(304).send();
      return reply.type("application/json; charset=utf-8").send(body);
    };
  app.get<{ Params: { uuid: string } }>("/device/v3/:uuid/state", targetState(3));
  app.get<{ Params: { uuid: string } }>("/device/v2/:uuid/state", targetState(2));
  await supervisorCompatRoutes(app, ctx);

  /**
   * A fleet's default state (balena's route, for preloading images and for tools): for users who
   * may read the fleet, its provisioning keys and its devices. Anyone else, and an unknown fleet
   * or commit, gets balena's 401.
   */
  const fleetStateRoute = (url: string) =>
    app.get<{ Params: { uuid: string }; Querystring: { releaseUuid?: string } }>(url, async (request, reply) => {
      const caller = requireAuth(request);
      const { releaseUuid } = parseInput(fleetStateQuery, request.query);
      const fleet = await fleetStateFacts(db, request.params.uuid, releaseUuid);
      const allowed =
        fleet !== undefined &&
        (caller.user
          ? await mayDo(db, caller, "application.read", { fleet: fleet.id })
          : caller.actor === fleet.actor || (await isDeviceOfFleet(db, caller.actor, fleet.id)));
      if (!fleet || !allowed || (releaseUuid !== undefined && fleet.release === null)) {
        throw new FlotillaError("unauthorized");
      }
      return reply.type("application/json; charset=utf-8").send(JSON.stringify(await buildFleetState(db, fleet)));
    });
  // balena-cli asks with a trailing slash.
  fleetStateRoute("/device/v3/fleet/:uuid/state");
  fleetStateRoute("/device/v3/fleet/:uuid/state/");

  await deviceLogRoutes(app, ctx);
  await logSearchRoutes(app, ctx);

  app.patch("/device/v3/state", { bodyLimit: STATE_REPORT_BODY_LIMIT, ...DEVICE_ONLY }, async (request, reply) => {
    const device = await identities.of(request);
    const body = parseInput(stateReportBody, request.body);
    const [uuid, report] = Object.entries(body)[0] ?? [];
    if (uuid !== device.uuid || !report) throw new FlotillaError("unauthorized");
    devices.heartbeat.seen(device.id);
    await devices.reports.record(device, report);
    await ctx.supervisorApis.remember(device.id, report);
    return reply.code(200).send();
  });

  await app.register(async (scope) => {
    // The log stream is read as it arrives; Fastify's body parsing (and its size limit) stay out of it.
    scope.addContentTypeParser("application/x-ndjson", (_request, payload, done) => done(null, payload));
    scope.post<{ Params: { uuid: string } }>("/device/v2/:uuid/log-stream", DEVICE_ONLY, async (request, reply) => {
      const device = await identities.of(request);
      if (device.uuid !== request.params.uuid) throw new FlotillaError("unauthorized");
      if (!request.headers["content-type"]?.startsWith("application/x-ndjson")) {
        throw new FlotillaError("unsupported_media_type");
      }
      devices.heartbeat.seen(device.id);
      const tooLarge = () =>
        new FlotillaError(
          "payload_too_large",
          `A log stream request carries at most ${LOG_STREAM_MAX_MIB} MiB; open a new one`,
        );
      // Bounded as sent and as unpacked: a few KiB of gzip can unpack to gigabytes.
      const raw = (request.body as Readable).pipe(byteCap(LOG_STREAM_MAX_BYTES, tooLarge));
      (request.body as Readable).on("error", (error) => raw.destroy(error));
      const stream =
        request.headers["content-encoding"] === "gzip"
          ? pipeline(raw, createGunzip(), byteCap(LOG_STREAM_MAX_BYTES, tooLarge), () => {})
          : raw;
      const decoder = new StringDecoder("utf8");
      let partial = "";
      let skipping = false;
      const take = (text: string) => {
        const now = Date.now();
        const pieces = (partial + text).split("\n");
        partial = pieces.pop() ?? "";
        const lines = [];
        for (const piece of pieces) {
          if (skipping) {
            skipping = false;
            continue;
          }
          if (piece.trim() === "") continue;
          try {
            const line = parseLogLine(JSON.parse(piece), now);
            if (line) lines.push(line);
          } catch {
            // Not JSON: dropped, the stream goes on.
          }
        }
        // A line without its end grows no further than the bound: the rest of it is dropped.
        if (partial.length > MAX_RAW_LOG_LINE) {
          partial = "";
          skipping = true;
        }
        devices.logs.append(device.id, lines);
        devices.heartbeat.seen(device.id);
      };
      try {
        for await (const chunk of stream) take(decoder.write(chunk as Buffer));
        take(`${decoder.end()}\n`);
      } catch (error) {
        // The client may still be sending: the connection closes after the answer, so it stops.
        reply.header("connection", "close");
        if (error instanceof FlotillaError) throw error;
        throw new FlotillaError("bad_request", "The log stream could not be read");
      }
      return reply.code(201).send();
    });
  });

  app.get("/cloudlink/v1/connect", { websocket: true, ...DEVICE_ONLY }, async (socket, request) => {
    const arrived = process.hrtime.bigint();
    const arrivedAt = new Date();
    const attempt = parseCloudlinkAttempt(request.headers[CLOUDLINK_ATTEMPT_HEADER]);
    const device = await identities.maybe(request).catch(() => undefined);
    if (!device) {
      socket.close(4001, "a device key is required");
      return;
    }
    if (!(await devices.relay.claimAttempt(device.id, attempt))) {
      socket.close(4000, "replaced by a newer connection");
      return;
    }
    const link = devices.relay.attach(device.id, socket, arrived, attempt);
    devices.heartbeat.seen(device.id);
    let alive = true;
    // The connect's own `last_vpn_event`: the close clears the flag only if it is still the last event.
    let opened: Promise<unknown> = devices.vpnConnected(device.id, arrivedAt);
    const connectedAt = opened.then(
      (at) => at as string | null | undefined,
      () => undefined,
    );
    socket.on("pong", () => {
      alive = true;
      link.refresh();
    });
    const pinger = setInterval(() => {
      if (!alive) {
        socket.terminate();
        return;
      }
      alive = false;
      socket.ping();
    }, CLOUDLINK_PING_MS);
    pinger.unref();
    socket.on("close", () => {
      clearInterval(pinger);
      // After the connect is written, so the close is the last word.
      opened = opened
        .then(() => link.detach())
        .then(async (wasCurrent) =>
          wasCurrent ? devices.vpnDisconnected({ id: device.id, since: await connectedAt }) : undefined,
        )
        .catch((error: unknown) => request.log.error({ err: error }, "cloudlink: close not recorded"));
    });
    await opened.catch((error: unknown) => request.log.error({ err: error }, "cloudlink: connect not recorded"));
  });
}
