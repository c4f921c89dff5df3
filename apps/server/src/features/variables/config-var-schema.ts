import {
  FILE_VARIABLE_MAX_LENGTH,
  fileVariableProblem,
  parseIntegerVariable,
  VARIABLE_TEXTS,
  type VariableRules,
} from "@flotilla/domain";

/**
 * The configuration variables Flotilla knows (spec 2 §3 "Variables", §7 `config.getConfigVarSchema`):
 * a JSON-schema-like description per name, per device type. The dashboard's fleet and device
 * configuration pages build their forms from it; the data-API hooks check known names' values with
 * it; the simulated device reboots for the `will_reboot` ones. Names are given in the `BALENA_`
 * namespace; the legacy `RESIN_` twin of each name means the same.
 */

export type ConfigVarProperty = {
  type: "integer" | "string";
  description: string;
  enum?: string[];
  enumNames?: string[];
  default?: string | number;
  format?: "data-url";
  will_reboot?: boolean;
  minimum?: number;
  maximum?: number;
};

const onOff = (description: string, defaultValue: "0" | "1", willReboot = false): ConfigVarProperty => ({
  type: "string",
  description,
  enum: ["0", "1"],
  enumNames: ["Disabled", "Enabled"],
  default: defaultValue,
  ...(willReboot ? { will_reboot: true } : {}),
});

/** Supervisor and OS settings of every device type. */
const COMMON: Readonly<Record<string, ConfigVarProperty>> = {
  BALENA_SUPERVISOR_POLL_INTERVAL: {
    type: "integer",
    description: "How often the device asks for its target state, in milliseconds.",
    default: 60_000,
    minimum: 1_000,
    maximum: 86_400_000,
  },
  BALENA_SUPERVISOR_LOCAL_MODE: onOff(
    "Local mode: the device ignores the fleet's releases and runs what is pushed to it on the local network (development OS only).",
    "0",
  ),
  BALENA_SUPERVISOR_PERSISTENT_LOGGING: onOff(
    "Keep the device's logs on disk across reboots (the device reboots to apply).",
    "0",
    true,
  ),
  BALENA_SUPERVISOR_DELTA: onOff("Download only the differences between releases (binary deltas).", "1"),
  BALENA_SUPERVISOR_DELTA_REQUEST_TIMEOUT: {
    type: "integer",
    description: "How long the device waits for a delta to be ready, in milliseconds.",
    default: 59_000,
    minimum: 0,
  },
  BALENA_SUPERVISOR_VPN_CONTROL: onOff("Keep the cloudlink connection (remote terminal, public URL) up.", "1"),
  BALENA_SUPERVISOR_CONNECTIVITY_CHECK: onOff("Check the network connection and reconnect when it drops.", "1"),
  BALENA_SUPERVISOR_INSTANT_UPDATE_TRIGGER: onOff("Apply a new release as soon as it is pushed.", "1"),
  BALENA_SUPERVISOR_HARDWARE_METRICS: onOff("Report CPU, memory, storage and temperature.", "1"),
  BALENA_HOST_SPLASH_IMAGE: {
    type: "string",
    description: `Boot splash image: a PNG, at most ${FILE_VARIABLE_MAX_LENGTH.toLocaleString("en")} characters as a data URL.`,
    format: "data-url",
  },
};

const hdmiGroup = (what: string): ConfigVarProperty => ({
  type: "integer",
  description: `${what}: 0 as the display says, 1 CEA (televisions), 2 DMT (computer monitors).`,
  default: 0,
  minimum: 0,
  maximum: 2,
  will_reboot: true,
});

const hdmiMode = (what: string): ConfigVarProperty => ({
  type: "integer",
  description: `${what}: a mode number of the HDMI group (e.g. 82 is 1080p 60 Hz in DMT).`,
  default: 1,
  minimum: 1,
  will_reboot: true,
});

/** Boot configuration (config.txt) of Raspberry Pi family boards. */
const RASPBERRY_PI: Readonly<Record<string, ConfigVarProperty>> = {
  BALENA_HOST_CONFIG_gpu_mem: {
    type: "integer",
    description: "Memory given to the GPU, in megabytes.",
    default: 64,
    minimum: 16,
    maximum: 944,
    will_reboot: true,
  },
  BALENA_HOST_CONFIG_dtoverlay: {
    type: "string",
    description: 'Device tree overlays, each quoted and separated by commas (e.g. "vc4-kms-v3d").',
    default: '"vc4-kms-v3d"',
    will_reboot: true,
  },
  BALENA_HOST_CONFIG_dtparam: {
    type: "string",
    description: 'Device tree parameters, each quoted and separated by commas (e.g. "i2c_arm=on","spi=on").',
    default: '"i2c_arm=on","spi=on","audio=on"',
    will_reboot: true,
  },
  BALENA_HOST_CONFIG_disable_splash: onOff("Hide the rainbow splash screen at boot.", "1", true),
  BALENA_HOST_CONFIG_enable_uart: onOff("Enable the serial console (UART).", "0", true),
  BALENA_HOST_CONFIG_hdmi_force_hotplug: onOff("Use HDMI even when no display is detected.", "0", true),
  BALENA_HOST_CONFIG_gpio: {
    type: "string",
    description: 'GPIO pins set at boot: pin ranges and their modes, each quoted (e.g. "17=op,dh").',
    will_reboot: true,
  },
  BALENA_HOST_CONFIG_hdmi_group: hdmiGroup("HDMI mode group"),
  BALENA_HOST_CONFIG_hdmi_mode: hdmiMode("HDMI resolution and refresh rate"),
  BALENA_HOST_CONFIG_hdmi_cvt: {
    type: "string",
    description:
      "A custom HDMI mode: width height refresh-rate aspect margins interlace reduced-blanking (e.g. 800 480 60 6 0 0 0).",
    will_reboot: true,
  },
  BALENA_HOST_CONFIG_display_rotate: {
    type: "string",
    description: "Rotate or flip the display: 0, 1, 2 or 3 quarter turns, or a flip such as 0x10000.",
    default: "0",
    will_reboot: true,
  },
};

/** The second HDMI port of the boards that have two (Raspberry Pi 4 and 400, Compute Module 4). */
const SECOND_HDMI_PORT: Readonly<Record<string, ConfigVarProperty>> = {
  "BALENA_HOST_CONFIG_hdmi_force_hotplug:1": onOff(
    "Use the second HDMI port even when no display is detected.",
    "0",
    true,
  ),
  "BALENA_HOST_CONFIG_hdmi_group:1": hdmiGroup("HDMI mode group of the second port"),
  "BALENA_HOST_CONFIG_hdmi_mode:1": hdmiMode("HDMI resolution and refresh rate of the second port"),
};

const isRaspberryPi = (slug: string) => /^(raspberry|rpi|fincm3|raspberrypi)/.test(slug);
const hasSecondHdmiPort = (slug: string) =>
  ["raspberrypi4-64", "raspberrypi400-64", "raspberrypicm4-ioboard"].includes(slug);

/** The schema's properties for a device type slug (the common ones without a type). */
export function configVarProperties(deviceType?: string): Record<string, ConfigVarProperty> {
  if (deviceType === undefined || !isRaspberryPi(deviceType)) return { ...COMMON };
  return { ...COMMON, ...RASPBERRY_PI, ...(hasSecondHdmiPort(deviceType) ? SECOND_HDMI_PORT : {}) };
}

/** The answer of `GET /config/vars` (balena-sdk `config.getConfigVarSchema`). */
export function configVarsAnswer(rules: VariableRules, deviceType?: string) {
  return {
    reservedNames: rules.reservedNames,
    reservedNamespaces: rules.reservedNamespaces,
    whiteListedNames: rules.whiteListedNames,
    whiteListedNamespaces: rules.whiteListedNamespaces,
    blackListedNames: rules.blackListedNames,
    // What makes a name invalid (balena-sdk's ConfigVarDefinition carries these as strings).
    invalidRegex: "^[^A-Za-z]|[^A-Za-z0-9_]",
    configVarInvalidRegex: "^[^A-Za-z]|[^A-Za-z0-9_:]",
    configVarSchema: { type: "object", properties: configVarProperties(deviceType) },
  };
}

const EVERY_PROPERTY: Readonly<Record<string, ConfigVarProperty>> = { ...COMMON, ...RASPBERRY_PI, ...SECOND_HDMI_PORT };

/** A known configuration variable's description, whichever namespace names it. */
export function knownConfigVariable(name: string): ConfigVarProperty | undefined {
  const canonical = name.startsWith("RESIN_") ? `BALENA_${name.slice("RESIN_".length)}` : name;
  return EVERY_PROPERTY[canonical];
}

/**
 * A known configuration variable's value checked against its schema: the value to store (integers
 * normalised from the entered string, spec 2 §5) or the problem's text.
 */
export function checkConfigValue(name: string, value: string): { value: string } | { problem: string } {
  const property = knownConfigVariable(name);
  if (!property) return { value };
  if (property.type === "integer") {
    const parsed = parseIntegerVariable(value);
    if (parsed === undefined) return { problem: VARIABLE_TEXTS.integerRequired };
    if (property.minimum !== undefined && parsed < property.minimum) {
      return { problem: `The value must be at least ${property.minimum}` };
    }
    if (property.maximum !== undefined && parsed > property.maximum) {
      return { problem: `The value must be at most ${property.maximum}` };
    }
    return { value: String(parsed) };
  }
  if (property.enum) {
    // Booleans written as words are accepted and stored as the schema's 0/1.
    const word = value.trim().toLowerCase();
    const normalised = word === "true" ? "1" : word === "false" ? "0" : value.trim();
    if (!property.enum.includes(normalised)) return { problem: `The value must be one of ${property.enum.join(", ")}` };
    return { value: normalised };
  }
  if (property.format === "data-url" && value !== "") {
    const problem = fileVariableProblem(value);
    return problem ? { problem } : { value };
  }
  return { value };
}
