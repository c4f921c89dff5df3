import { APP_VERSION } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { servedAgentPackage } from "../agent-download/routes.ts";
import { odataAs } from "../data-api/routes.ts";
import {
  agentFileName,
  DEVICE_TYPE_SELECT,
  type DeviceTypeRow,
  deviceTypeJson,
  isDeviceTypeSlug,
  isImageVersion,
} from "./catalogue.ts";

/**
 * balena's device-type endpoints and OS download (balena-sdk `config.getDeviceTypes`,
 * `os.getDownloadSize`, `os.download`; balena-cli `os download`): readable without a token, as on
 * balena; with one, the caller's private device types too. Rows are read through the data API,
 * so the device_type read rules apply here as on /v7. The download is the agent package.
 */
/** Device-type rows read through the data API as the caller (a guest without one). */
async function readDeviceTypes(ctx: AppContext, caller: Caller | undefined, query: string) {
  const response = await odataAs(ctx, caller, { method: "GET", url: `/v7/device_type?${query}`, body: undefined });
  return (response.body as { d: DeviceTypeRow[] }).d;
}

/** Every device type the caller may read, as balena's device-type JSON (`/device-types/v1`, `/config`'s `deviceTypes`). */
export async function deviceTypeJsons(ctx: AppContext, caller: Caller | undefined) {
  return (await readDeviceTypes(ctx, caller, `${DEVICE_TYPE_SELECT}&$orderby=slug asc`)).map(deviceTypeJson);
}

export async function deviceTypeRoutes(app: FastifyInstance, ctx: AppContext) {
  const read = (request: FastifyRequest, query: string) => readDeviceTypes(ctx, request.auth, query);

  /** A device type by slug or alias: 400 for a malformed one, 404 with balena's text for an unknown one. */
  const deviceType = async (request: FastifyRequest, slug: string | undefined) => {
    if (!isDeviceTypeSlug(slug)) throw new FlotillaError("bad_request", "Invalid device type");
    // The slug's characters are checked above, so it sits safely in the quoted literal.
    const [row] = await read(
      request,
      `${DEVICE_TYPE_SELECT}&$top=1&$filter=device_type_alias/any(dta:dta/is_referenced_by__alias eq '${slug}')`,
    );
    if (!row) throw new FlotillaError("not_found", `Unknown device type ${slug}`);
    return row;
  };

  const guest = { config: { guest: true } };

  app.get("/device-types/v1", guest, (request) => deviceTypeJsons(ctx, request.auth));

  app.get<{ Params: { slug: string } }>("/device-types/v1/:slug", guest, async (request) =>
    deviceTypeJson(await deviceType(request, request.params.slug)),
  );

  // One download for every OS version: the agent package, in its own version.
  app.get<{ Params: { slug: string } }>("/device-types/v1/:slug/images", guest, async (request) => {
    await deviceType(request, request.params.slug);
    return { versions: [APP_VERSION], latest: APP_VERSION };
  });

  app.get<{ Params: { slug: string; version: string } }>(
    "/device-types/v1/:slug/images/:version/download-size",
    guest,
    async (request) => {
      const { slug, version } = request.params;
      const row = await deviceType(request, slug);
      if (!isImageVersion(version))
        throw new FlotillaError("not_found", `Device ${row.slug} not found for ${version} version`);
      return { size: (await servedAgentPackage(app)).tgz.length };
    },
  );

  app.get<{ Querystring: { deviceType?: string; version?: string } }>("/download", guest, async (request, reply) => {
    const { deviceType: slug, version = "latest" } = request.query;
    const row = await deviceType(request, slug);
    if (!isImageVersion(version))
      throw new FlotillaError("not_found", `Device ${row.slug} not found for ${version} version`);
    const { tgz, version: agentVersion } = await servedAgentPackage(app);
    return reply
      .type("application/gzip")
      .header("content-disposition", `attachment; filename="${agentFileName(agentVersion)}"`)
      .header("content-length", tgz.length)
      .send(tgz);
  });
}
