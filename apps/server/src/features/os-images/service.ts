import { osImageFileName } from "@flotilla/domain";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { buildDeviceConfig, type ConfigRequest } from "../device-config/service.ts";
import type { BootFile } from "./boot-partition.ts";
import {
  bootPartitionOf,
  configuredImage,
  type createDownloadSlots,
  type ImageDownload,
  partitionCopiesDir,
  plainImage,
} from "./configured-image.ts";
import { findOsImage, type OsImage, osImagesOf } from "./image-files.ts";
import { WIFI_CONNECTION_PATH, wifiConnectionFile } from "./wifi-connection.ts";

/**
 * The OS download (`GET /download`, balena-sdk `os.download`, and the dashboard's form): the
 * balenaOS image of a device type and version from FLOTILLA_OS_IMAGES_DIR, configured for a fleet
 * when the request names one, as it is otherwise. A device type the operator provides no image
 * for keeps the download it had before images existed: the agent package.
 */

/** What the download is asked for: balena-sdk `os.download`'s options, with the fleet as `appId`. */
export type OsDownloadRequest = Omit<ConfigRequest, "appId" | "version"> & {
  deviceType: string;
  version: string;
  appId?: number | undefined;
};

export type OsDownloadChoice = { kind: "image"; image: OsImage } | { kind: "agent" };

/** The image asked for, or the agent package where this server has no image of the device type. */
export async function chooseOsDownload(
  imagesDir: string | undefined,
  deviceType: string,
  version: string,
  configured: boolean,
): Promise<OsDownloadChoice> {
  const images = imagesDir ? await osImagesOf(imagesDir, deviceType) : [];
  if (images.length === 0) {
    // A configured image is a balenaOS image: the agent package is no answer to it.
    if (configured) throw noImage(deviceType, version, imagesDir !== undefined);
    return { kind: "agent" };
  }
  const image = imagesDir ? await findOsImage(imagesDir, deviceType, version) : undefined;
  if (!image) {
    throw new FlotillaError(
      "not_found",
      `This server has no balenaOS ${version} image for ${deviceType}; it has ${images.map((one) => one.version).join(", ")}.`,
    );
  }
  return { kind: "image", image };
}

const noImage = (deviceType: string, version: string, hasDirectory: boolean) =>
  new FlotillaError(
    "not_found",
    hasDirectory
      ? `This server has no balenaOS ${version} image for ${deviceType}. Download config.json and configure an image with balena-cli, or ask the operator to add the image to FLOTILLA_OS_IMAGES_DIR.`
      : `This server has no balenaOS images (FLOTILLA_OS_IMAGES_DIR is not set). Download config.json and configure an image with balena-cli.`,
  );

/**
 * The image, configured when a fleet is named: the caller must be signed in for any image, and
 * for a configured one may create the fleet's provisioning keys (as `POST /download-config`
 * checks). Its boot partition is found before a provisioning key is made, so a refused or broken
 * download leaves no key behind.
 */
export async function osImageDownload(
  ctx: AppContext,
  slots: ReturnType<typeof createDownloadSlots>,
  caller: Caller | undefined,
  image: OsImage,
  input: OsDownloadRequest,
): Promise<ImageDownload> {
  if (!caller) throw new FlotillaError("not_logged_in", "Sign in to download balenaOS images from this server.");
  const imagesDir = ctx.config.osImagesDir ?? "";
  const partition = await bootPartitionOf(image, imagesDir);
  if (input.appId === undefined) return plainImage(image, osImageFileName(image.deviceType, image.version));
  const release = slots.take();
  if (!release) {
    throw new FlotillaError(
      "service_unavailable",
      "This server is preparing as many configured images as it can at once. Try again in a minute.",
      { headers: { "retry-after": "60" } },
    );
  }
  try {
    const config = await buildDeviceConfig(
      ctx.db,
      caller,
      { apiUrl: ctx.config.apiUrl, registryHost: ctx.config.registry?.host, deviceCa: ctx.config.deviceCa },
      { ...input, appId: input.appId, version: image.version, deviceType: image.deviceType },
    );
    const files: BootFile[] = [{ path: "config.json", content: JSON.stringify(config) }];
    if (config.network === "wifi" && config.wifiSsid) {
      files.push({ path: WIFI_CONNECTION_PATH, content: wifiConnectionFile(config.wifiSsid, config.wifiKey) });
    }
    const fileName = osImageFileName(image.deviceType, image.version, {
      fleet: config.applicationName,
      developmentMode: config.developmentMode,
    });
    return await configuredImage(image, partition, files, partitionCopiesDir(ctx.config.dataDir), fileName, release);
  } catch (error) {
    release();
    throw error;
  }
}
