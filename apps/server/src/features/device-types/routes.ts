import { APP_VERSION } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { servedAgentPackage } from "../agent-download/routes.ts";
import { odataAs } from "../data-api/routes.ts";
import { osImagesOf } from "../os-images/image-files.ts";
import { chooseOsDownload } from "../os-images/service.ts";
import {
  DEVICE_TYPE_SELECT,
  type DeviceTypeRow,
  deviceTypeJson,
  isDeviceTypeSlug,
  isImageVersion,
} from "./catalogue.ts";

/** Device type rows through the data API, so the device_type read rules apply as on /v7. */
async function readDeviceTypes(ctx: AppContext, auth: Caller | undefined, query: string): Promise<DeviceTypeRow[]> {
  const response = await odataAs(ctx, auth, { method: "GET", url: `/v7/device_type?${query}`, body: undefined });
  return (response.body as { d: DeviceTypeRow[] }).d;
}

/** A device type by slug or alias: 400 for a malformed one, 404 with balena's text for an unknown one. */
export async function deviceTypeBySlug(
  ctx: AppContext,
  auth: Caller | undefined,
  slug: string | undefined,
): Promise<DeviceTypeRow> {
  if (!isDeviceTypeSlug(slug)) throw new FlotillaError("bad_request", "Invalid device type");
  // The slug's characters are checked above, so it sits safely in the quoted literal.
  const [row] = await readDeviceTypes(
    ctx,
    auth,
    `${DEVICE_TYPE_SELECT}&$top=1&$filter=device_type_alias/any(dta:dta/is_referenced_by__alias eq '${slug}')`,
  );
  if (!row) throw new FlotillaError("not_found", `Unknown device type ${slug}`);
  return row;
}

/** Every device type the caller may read, as balena's device-type JSON (`/device-types/v1`, `/config`'s `deviceTypes`). */
export async function deviceTypeJsons(ctx: AppContext, caller: Caller | undefined) {
  return (await readDeviceTypes(ctx, caller, `${DEVICE_TYPE_SELECT}&$orderby=slug asc`)).map(deviceTypeJson);
}

/**
 * balena's device-type endpoints (balena-sdk `config.getDeviceTypes`, `os.getDownloadSize`;
 * balena-cli `os download`): readable without a token, as on balena; with one, the caller's
 * private device types too. An OS version's download is the balenaOS image the operator provides
 * (features/os-images), else the agent package; `GET /download` itself is in features/os-images.
 */
export async function deviceTypeRoutes(app: FastifyInstance, ctx: AppContext) {
  const deviceType = (request: FastifyRequest, slug: string | undefined) => deviceTypeBySlug(ctx, request.auth, slug);

  const guest = { config: { guest: true } };

  app.get("/device-types/v1", guest, (request) => deviceTypeJsons(ctx, request.auth));

  app.get<{ Params: { slug: string } }>("/device-types/v1/:slug", guest, async (request) =>
    deviceTypeJson(await deviceType(request, request.params.slug)),
  );

  // The versions of the device type's balenaOS images on this server; without any, the agent's version.
  app.get<{ Params: { slug: string } }>("/device-types/v1/:slug/images", guest, async (request) => {
    const row = await deviceType(request, request.params.slug);
    const images = ctx.config.osImagesDir ? await osImagesOf(ctx.config.osImagesDir, row.slug) : [];
    if (images.length === 0) return { versions: [APP_VERSION], latest: APP_VERSION };
    return { versions: images.map((image) => image.version), latest: images[0]?.version };
  });

  app.get<{ Params: { slug: string; version: string } }>(
    "/device-types/v1/:slug/images/:version/download-size",
    guest,
    async (request) => {
      const { slug, version } = request.params;
      const row = await deviceType(request, slug);
      if (!isImageVersion(version))
        throw new FlotillaError("not_found", `Device ${row.slug} not found for ${version} version`);
      // A configured image has its image's size: config.json is written inside the boot partition.
      const choice = await chooseOsDownload(ctx.config.osImagesDir, row.slug, version, false);
      return { size: choice.kind === "image" ? choice.image.size : (await servedAgentPackage(app)).tgz.length };
    },
  );
}
