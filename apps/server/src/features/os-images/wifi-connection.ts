/**
 * The Wi-Fi settings of a configured image: balenaOS reads NetworkManager connection files from
 * its boot partition's `system-connections/` folder (balena's own tools write `resin-wifi` there
 * from config.json's `wifiSsid`/`wifiKey`). A keyfile in NetworkManager's format: a hidden-capable
 * WPA-PSK network (an open one without a passphrase), addresses by DHCP.
 */

export const WIFI_CONNECTION_PATH = "system-connections/resin-wifi";

export function wifiConnectionFile(ssid: string, passphrase: string | undefined): string {
  const sections = [
    ["[connection]", "id=resin-wifi", "type=wifi"],
    ["[wifi]", "hidden=true", "mode=infrastructure", `ssid=${ssid}`],
    ...(passphrase ? [["[wifi-security]", "auth-alg=open", "key-mgmt=wpa-psk", `psk=${passphrase}`]] : []),
    ["[ipv4]", "method=auto"],
    ["[ipv6]", "addr-gen-mode=stable-privacy", "method=auto"],
  ];
  return `${sections.map((lines) => lines.join("\n")).join("\n\n")}\n`;
}
