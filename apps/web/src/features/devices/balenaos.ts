import {
  compareOsVersions,
  type OsRelease,
  parseOsVersion,
  wifiPassphraseProblem,
  wifiSsidProblem,
} from "@flotilla/domain";
import { useQuery } from "@tanstack/react-query";
import { useSdk, useServices } from "../../app-services.tsx";

/**
 * Adding a balenaOS device (issue 35): the settings of the add-device dialog's balenaOS choice,
 * the images this server holds (`GET /os-images/v1/:deviceType`), and the configured image
 * download, which the browser itself makes (balena's form post to `POST /download`) so it shows
 * the file's size and progress without the page holding a GB in memory.
 */

export type BalenaOsSettings = {
  version: string;
  developmentMode: boolean;
  network: "ethernet" | "wifi";
  wifiSsid: string;
  wifiKey: string;
};

export const DEFAULT_BALENAOS_SETTINGS: BalenaOsSettings = {
  version: "",
  developmentMode: false,
  network: "ethernet",
  wifiSsid: "",
  wifiKey: "",
};

/** A balenaOS image on this server. */
export type OsImage = { version: string; size: number };
export type OsImages = { deviceType: string; directory: boolean; images: OsImage[] };

export function useOsImages(deviceType: string) {
  const sdk = useSdk();
  const { config } = useServices();
  return useQuery({
    queryKey: ["os-images", deviceType],
    enabled: deviceType !== "",
    queryFn: async () =>
      (
        await sdk.request.send({
          method: "GET",
          url: `/os-images/v1/${encodeURIComponent(deviceType)}`,
          baseUrl: config.apiUrl,
        })
      ).body as OsImages,
  });
}

const sameVersion = (a: string, b: string) => {
  const [left, right] = [parseOsVersion(a), parseOsVersion(b)];
  return left !== undefined && right !== undefined && compareOsVersions(left, right) === 0;
};

/** The image of a catalogue version, if this server has it. */
export const imageOf = (images: readonly OsImage[], version: string) =>
  images.find((image) => sameVersion(image.version, version));

/** The catalogue's versions, newest first. */
export function sortedOsVersions(versions: readonly OsRelease[]): OsRelease[] {
  const order = (release: OsRelease) => parseOsVersion(release.raw_version);
  return [...versions].sort((a, b) => {
    const [left, right] = [order(a), order(b)];
    return left && right ? compareOsVersions(right, left) : b.raw_version.localeCompare(a.raw_version);
  });
}

/** The version first offered: the newest one with an image here, else the newest of the default line. */
export function defaultOsVersion(versions: readonly OsRelease[], images: readonly OsImage[]): string {
  const sorted = sortedOsVersions(versions);
  const withImage = sorted.find((release) => imageOf(images, release.raw_version));
  const defaultLine = sorted.find((release) => release.osType === "default");
  return (withImage ?? defaultLine ?? sorted[0])?.raw_version ?? "";
}

/** What is wrong with the network settings, per field (the server checks the same). */
export function networkProblems(settings: BalenaOsSettings): { wifiSsid?: string; wifiKey?: string } {
  if (settings.network !== "wifi") return {};
  const wifiSsid = wifiSsidProblem(settings.wifiSsid);
  const wifiKey = wifiPassphraseProblem(settings.wifiKey);
  return { ...(wifiSsid ? { wifiSsid } : {}), ...(wifiKey ? { wifiKey } : {}) };
}

/** The options balena-sdk `os.getConfig` and the image download both take. */
export function balenaOsOptions(settings: BalenaOsSettings) {
  return {
    version: settings.version,
    developmentMode: settings.developmentMode,
    network: settings.network,
    ...(settings.network === "wifi"
      ? { wifiSsid: settings.wifiSsid, ...(settings.wifiKey ? { wifiKey: settings.wifiKey } : {}) }
      : {}),
  };
}

/** The balena-cli line that writes the downloaded config.json into an image balena published. */
export function configureCommand(imageFile: string): string {
  return `balena os configure ${imageFile} --config config.json`;
}

/**
 * Starts the configured image download: a form posted to `POST {api}/download` into `target` (a
 * hidden frame), with the session as `_token` as balena's dashboard sends it. The form exists
 * only for the submit, so the token and Wi-Fi passphrase do not stay in the page.
 */
export function submitImageDownload(input: {
  apiUrl: string;
  token: string;
  target: string;
  fields: Record<string, string | number | boolean | undefined>;
}): void {
  const form = document.createElement("form");
  form.method = "post";
  form.action = `${input.apiUrl}/download`;
  form.target = input.target;
  form.style.display = "none";
  for (const [name, value] of Object.entries({ _token: input.token, ...input.fields })) {
    if (value === undefined) continue;
    const field = document.createElement("input");
    field.type = "hidden";
    field.name = name;
    field.value = String(value);
    form.append(field);
  }
  document.body.append(form);
  form.submit();
  form.remove();
}
