import { wifiPassphraseProblem, wifiSsidProblem } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { bearerToken, type Caller, callerOf, requireAuth } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { servedAgentPackage } from "../agent-download/routes.ts";
import { unsupportedOsVersion } from "../device-config/routes.ts";
import { agentFileName, isImageVersion } from "../device-types/catalogue.ts";
import { deviceTypeBySlug } from "../device-types/routes.ts";
import { createDownloadSlots, type ImageDownload, partitionCopiesDir, removeStaleCopies } from "./configured-image.ts";
import { osImagesOf } from "./image-files.ts";
import { chooseOsDownload, osImageDownload } from "./service.ts";

/** `true`/`false` as a query string or form field says it, or a JSON boolean. */
const flag = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")], {
  error: "must be true or false",
});

/**
 * balena-sdk `os.download`'s query (`deviceType`, `version`, `appId`, `developmentMode`,
 * `appUpdatePollInterval`, `network`, `wifiSsid`, `wifiKey`, `fileType`, `imageType`), which
 * balena's dashboard posts as a form with the session as `_token`; the provisioning key's name
 * and expiry as `POST /download-config` takes them. Empty fields count as absent (a form sends them).
 */
const downloadInput = z.preprocess(
  (input) =>
    input && typeof input === "object"
      ? Object.fromEntries(Object.entries(input).filter(([, value]) => value !== ""))
      : input,
  z
    .object({
      deviceType: z.string().optional(),
      version: z.string().trim().max(100).default("latest"),
      appId: z.coerce.number({ error: "must be the fleet's id" }).int().positive().max(2147483647).optional(),
      developmentMode: flag.optional(),
      appUpdatePollInterval: z.coerce
        .number({ error: "must be a number of minutes" })
        .int("must be a whole number of minutes")
        .min(1, "must be at least 1 minute")
        .max(24 * 60, "must be at most 1440 minutes")
        .optional(),
      network: z.enum(["ethernet", "wifi"], { error: 'must be "ethernet" or "wifi"' }).default("ethernet"),
      wifiSsid: z.string().optional(),
      wifiKey: z.string().max(64).optional(),
      provisioningKeyName: z.string().trim().max(255).optional(),
      provisioningKeyExpiryDate: z.coerce
        .date({ error: "must be a date" })
        .refine((date) => date.getTime() > Date.now() - 60_000, "must not be in the past")
        .optional(),
      // Images are served raw, as they are stored: balena's zip and gzip packings are not made here.
      fileType: z.enum([".img", ".zip", ".gz"], { error: "must be .img, .zip or .gz" }).optional(),
      imageType: z.enum(["raw", "flasher"], { error: "must be raw or flasher" }).optional(),
      _token: z.string().max(8192).optional(),
    })
    .superRefine((input, context) => {
      if (unsupportedOsVersion(input.version)) {
        context.addIssue({
          code: "custom",
          path: ["version"],
          message: "balenaOS versions <= 1.2.0 are no longer supported, please update",
        });
      }
      if (input.network !== "wifi") return;
      const ssid = wifiSsidProblem(input.wifiSsid ?? "");
      if (ssid) context.addIssue({ code: "custom", path: ["wifiSsid"], message: ssid });
      const key = wifiPassphraseProblem(input.wifiKey ?? "");
      if (key) context.addIssue({ code: "custom", path: ["wifiKey"], message: key });
    }),
);

/**
 * The OS download (features/os-images/service.ts): `GET /download` with a bearer token or none
 * (balena-sdk `os.download`, balena-cli `os download`), `POST /download` as balena's dashboard
 * submits its download form (the session as `_token`, so the browser itself downloads, with the
 * size and progress it shows for any download), and `GET /os-images/v1/:deviceType`, the images
 * the add-device dialog offers.
 */
export async function osImageRoutes(app: FastifyInstance, ctx: AppContext) {
  const slots = createDownloadSlots();
  await removeStaleCopies(partitionCopiesDir(ctx.config.dataDir));

  // balena's dashboard posts the download form (urlencoded) from the dashboard's origin.
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: 16_384 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  const serve = async (reply: FastifyReply, caller: Caller | undefined, query: unknown) => {
    const input = parseInput(downloadInput, query);
    const deviceType = await deviceTypeBySlug(ctx, caller, input.deviceType);
    if (!isImageVersion(input.version)) {
      throw new FlotillaError("not_found", `Device ${deviceType.slug} not found for ${input.version} version`);
    }
    const configured = input.appId !== undefined;
    const choice = await chooseOsDownload(ctx.config.osImagesDir, deviceType.slug, input.version, configured);
    if (choice.kind === "agent") {
      const { tgz, version } = await servedAgentPackage(app);
      return reply
        .type("application/gzip")
        .header("content-disposition", `attachment; filename="${agentFileName(version)}"`)
        .header("content-length", tgz.length)
        .send(tgz);
    }
    const download = await osImageDownload(ctx, slots, caller, choice.image, {
      ...input,
      deviceType: deviceType.slug,
      version: input.version,
    });
    return sendImage(reply, download);
  };

  // Images go out as they are: byte for byte, with their Content-Length (mime-db would let them be
  // gzipped). No HEAD twin: it would make a provisioning key and a partition copy for nothing.
  app.get("/download", { config: { guest: true }, compress: false, exposeHeadRoute: false }, (request, reply) =>
    serve(reply, request.auth, request.query),
  );

  // Public as a route: the token is the form's `_token` (or the usual bearer header), checked here.
  app.post("/download", { config: { public: true }, compress: false }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const token = bearerToken(request) ?? (typeof body._token === "string" && body._token ? body._token : undefined);
    const caller = token ? await callerOf(ctx, request, token) : undefined;
    return serve(reply, caller, body);
  });

  app.get<{ Params: { deviceType: string } }>("/os-images/v1/:deviceType", async (request) => {
    const caller = requireAuth(request);
    const deviceType = await deviceTypeBySlug(ctx, caller, request.params.deviceType);
    const dir = ctx.config.osImagesDir;
    const images = dir ? await osImagesOf(dir, deviceType.slug) : [];
    return {
      deviceType: deviceType.slug,
      directory: dir !== undefined,
      images: images.map((image) => ({ version: image.version, size: image.size })),
    };
  });
}

/** The image as a file download of its exact size; a client that goes away stops the stream. */
function sendImage(reply: FastifyReply, download: ImageDownload) {
  reply.raw.once("close", () => {
    if (!download.stream.readableEnded) download.stream.destroy();
  });
  return reply
    .type("application/octet-stream")
    .header("content-disposition", `attachment; filename="${download.fileName}"`)
    .header("content-length", download.size)
    .header("cache-control", "no-store")
    .send(download.stream);
}
