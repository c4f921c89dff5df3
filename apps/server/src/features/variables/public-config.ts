import type { Config } from "../../config.ts";

/**
 * `GET /config` (balena-sdk `config.getAll`, balena-cli): balena's keys, with what this server
 * has for them. Analytics, chat and Recurly are no part of Flotilla: their keys are empty.
 * `deviceTypes` is the device-type list older clients read from here (balena-sdk drops it).
 * `DEVICE_ONLINE_ICON`/`DEVICE_OFFLINE_ICON` are the dots balena's clients draw a device's
 * connectivity with, in the dashboard's operational green and disconnected red.
 */
export function publicConfig(config: Config, deviceTypes: unknown[]) {
  return {
    deployment: null,
    deviceUrlsBase: config.deviceUrlsBaseDomain,
    adminUrl: config.publicUrl,
    gitServerUrl: "",
    ga: { site: "", id: "" },
    mixpanelToken: "",
    intercomAppId: "",
    recurlyPublicKey: "",
    stripePublicKey: config.stripe?.publishableKey ?? "",
    freezeBillingVersions: [],
    DEVICE_ONLINE_ICON: dot("#16a34a"),
    DEVICE_OFFLINE_ICON: dot("#dc2626"),
    signupCodeRequired: false,
    supportedSocialProviders: config.socialProviders.map((provider) => provider.slug),
    deviceTypes,
  };
}

/** A 10 px round dot of one colour, as an SVG data URL. */
function dot(colour: string): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" viewBox="0 0 10 10"><circle cx="5" cy="5" r="5" fill="${colour}"/></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`;
}
