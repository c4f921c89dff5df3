/**
 * Adding a balenaOS device (issue 35 "Adding a balenaOS device from the dashboard"): the network
 * settings a configured image or config.json carries, checked alike by the dashboard's form and
 * the server, and the names shown for balenaOS downloads.
 */

/** An SSID is 1 to 32 bytes (IEEE 802.11). */
export const WIFI_SSID_MAX_BYTES = 32;

/** Control characters would break the NetworkManager file the settings are written to. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why a Wi-Fi network name cannot be used; undefined when it can. */
export function wifiSsidProblem(ssid: string): string | undefined {
  if (ssid.length === 0) return "is required for a Wi-Fi network";
  if (new TextEncoder().encode(ssid).length > WIFI_SSID_MAX_BYTES) return "must be at most 32 bytes long";
  if (CONTROL.test(ssid)) return "must not contain line breaks or control characters";
  return undefined;
}

/**
 * Why a Wi-Fi passphrase cannot be used; undefined when it can. Empty is an open network; WPA
 * takes 8 to 63 printable ASCII characters, or the 64 hexadecimal digits of a key.
 */
export function wifiPassphraseProblem(passphrase: string): string | undefined {
  if (passphrase.length === 0 || /^[0-9a-fA-F]{64}$/.test(passphrase)) return undefined;
  if (!/^[\u0020-\u007e]*$/.test(passphrase)) return "must be printable ASCII characters";
  if (passphrase.length < 8 || passphrase.length > 63) return "must be 8 to 63 characters (WPA)";
  return undefined;
}

/** Where to get balenaOS images that a server does not hold: balena's own download page. */
export const BALENAOS_DOWNLOAD_PAGE = "https://www.balena.io/os#download";

/**
 * The file name of a balenaOS image download: `balenaos-raspberrypi4-64-6.2.4.img` as it is,
 * `balenaos-<fleet>-raspberrypi4-64-6.2.4-dev.img` configured for a fleet (dev or prod edition).
 */
export function osImageFileName(
  deviceType: string,
  version: string,
  configured?: { fleet: string; developmentMode: boolean },
): string {
  const fleet = configured ? `${configured.fleet.replace(/[^\w.-]+/g, "_")}-` : "";
  const edition = configured ? (configured.developmentMode ? "-dev" : "-prod") : "";
  return `balenaos-${fleet}${deviceType}-${version}${edition}.img`;
}
