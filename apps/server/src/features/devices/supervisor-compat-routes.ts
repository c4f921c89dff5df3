import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { DEVICE_ONLY } from "../../lib/device-only.ts";
import { parseInput } from "../../lib/validation.ts";
import { odataAs, odataBatchAs } from "../data-api/routes.ts";
import { tagKeyProblem } from "../tags/hooks.ts";
import { STATE_REPORT_BODY_LIMIT } from "./state-report.ts";
import { fleetReleaseImages, type ReleaseImages, releaseIdsOf, reportFromV2, stateReportV2Body } from "./state-v2.ts";

/**
 * What balena's own Supervisor calls besides the v3 state (docs/device-protocol.md "balenaOS
 * devices"): `PATCH /device/v3/tags` and, for Supervisors before v3 of the state API, `PATCH
 * /device/v2/{uuid}/state` (the v2 GET is served with the v3 one, routes.ts).
 */

/** Tags one request may set: the Supervisor sends what changed since its last report. */
const MAX_TAGS = 100;
const tagsBody = z.record(
  z.string().max(64),
  z
    .record(z.string().max(200), z.string().max(10_000, "a tag value is at most 10000 characters"))
    .refine((tags) => Object.keys(tags).length <= MAX_TAGS, `at most ${MAX_TAGS} tags`),
);

/** Releases of v2 reports, by id: a Supervisor reports the same few again and again. */
const RELEASE_CACHE_SIZE = 1000;

export async function supervisorCompatRoutes(app: FastifyInstance, ctx: AppContext) {
  const { devices, db } = ctx;
  const { identities } = devices;

  /**
   * `{[uuid]: {[tag key]: value}}` (the Supervisor's `src/api-binder/tags.ts`): its own tags set
   * to these values, new ones created, in one transaction, through the data API as the device
   * (its rights, the tag key rules, a frozen device's refusal). Another device's uuid is 401.
   */
  app.patch("/device/v3/tags", { bodyLimit: STATE_REPORT_BODY_LIMIT, ...DEVICE_ONLY }, async (request, reply) => {
    const device = await identities.of(request);
    const body = parseInput(tagsBody, request.body);
    const uuids = Object.keys(body);
    if (uuids.length === 0) throw new FlotillaError("bad_request", "No device was sent.");
    if (uuids.some((uuid) => uuid !== device.uuid)) throw new FlotillaError("unauthorized");
    const tags = body[device.uuid] ?? {};
    const keys = Object.keys(tags);
    if (keys.length === 0) throw new FlotillaError("bad_request", "No tags were sent to be updated.");
    for (const key of keys) {
      const problem = tagKeyProblem(key);
      if (problem) throw new FlotillaError("bad_request", `${key}: ${problem}`);
    }
    const caller = requireAuth(request);
    devices.heartbeat.seen(device.id);
    const existing = await odataAs(ctx, caller, {
      method: "GET",
      url: `/v7/device_tag?$select=id,tag_key,value&$filter=device eq ${device.id}`,
      body: undefined,
    });
    const stored = new Map(
      ((existing.body as { d: { id: number; tag_key: string; value: string }[] }).d ?? []).map((tag) => [
        tag.tag_key,
        tag,
      ]),
    );
    const requests = keys.flatMap((key, index) => {
      const value = tags[key] as string;
      const tag = stored.get(key);
      if (tag?.value === value) return [];
      const write = tag
        ? { method: "PATCH", url: `/v7/device_tag(${tag.id})`, body: { value } }
        : { method: "POST", url: "/v7/device_tag", body: { device: device.id, tag_key: key, value } };
      return [{ id: String(index), atomicityGroup: "tags", ...write }];
    });
    if (requests.length === 0) return reply.code(200).send();
    const answer = await odataBatchAs(ctx, caller, { requests });
    const refused = (
      answer.body as { responses: { status: number; headers: Record<string, string>; body?: unknown }[] }
    ).responses.find((response) => response.status >= 300);
    if (refused) {
      return reply
        .code(refused.status)
        .headers(refused.headers)
        .type("text/plain; charset=utf-8")
        .send(typeof refused.body === "string" ? refused.body : JSON.stringify(refused.body ?? ""));
    }
    return reply.code(200).send();
  });

  /** `fleet:release` → the release's commit and images; only found ones are kept. */
  const releases = new Map<string, ReleaseImages>();
  /** The device's fleet's releases a v2 report names (releases a device runs are final: their images stay). */
  async function releasesOf(fleet: number, ids: number[]) {
    const found = new Map<number, ReleaseImages>();
    const missing: number[] = [];
    for (const id of ids) {
      const known = releases.get(`${fleet}:${id}`);
      if (known) found.set(id, known);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const read = await fleetReleaseImages(db, fleet, missing);
    if (releases.size + read.size > RELEASE_CACHE_SIZE) releases.clear();
    for (const [id, release] of read) {
      releases.set(`${fleet}:${id}`, release);
      found.set(id, release);
    }
    return found;
  }

  /**
   * A v2 report (`{local: {…, is_on__commit, apps: {[appId]: {services: {[imageId]: {releaseId,
   * status, download_progress}}}}}}`): recorded as the v3 report it means, in memory and written
   * in batches like any other.
   */
  app.patch<{ Params: { uuid: string } }>(
    "/device/v2/:uuid/state",
    { bodyLimit: STATE_REPORT_BODY_LIMIT, ...DEVICE_ONLY },
    async (request, reply) => {
      const device = await identities.of(request);
      if (device.uuid !== request.params.uuid) throw new FlotillaError("unauthorized");
      const { local } = parseInput(stateReportV2Body, request.body);
      devices.heartbeat.seen(device.id);
      if (!local) return reply.code(200).send();
      const known = await releasesOf(device.fleet, releaseIdsOf(local));
      const report = reportFromV2(local, String(device.fleet), known);
      await devices.reports.record(device, report);
      await ctx.supervisorApis.remember(device.id, report);
      return reply.code(200).send();
    },
  );
}
