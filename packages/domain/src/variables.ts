/**
 * Fleet, device and service variables (spec 2 §3 "Variables", §5 "Variables", §9).
 *
 * Environment variables reach the services of a release; configuration variables (names in a
 * reserved namespace such as `BALENA_`) configure the OS and the supervisor. The server enforces
 * these rules in the data-API hooks and the dashboard runs the same functions before it stages a
 * change. The texts are the spec's where it gives one; the others are listed in `errors.ts`.
 */

/** The per-service key meaning "all services" (spec 2 §3, §9). */
export const ALL_SERVICES = 0;

/** Largest accepted variable value, in characters (the server rejects longer ones with 400). */
export const VARIABLE_VALUE_MAX_LENGTH = 100_000;

/** Largest file-type config value (a PNG data URL), in characters of the data URL. */
export const FILE_VARIABLE_MAX_LENGTH = 100_000;

/**
 * The name rules of the server configuration (spec 2 §5: "The whitelist, blacklist and reserved
 * namespaces come from server configuration").
 * - `reservedNames`: names nobody may use as an environment variable.
 * - `reservedNamespaces`: prefixes of configuration variables; an environment variable beginning
 *   with one is a configuration variable, and (when the list is not empty) every configuration
 *   variable name must begin with one.
 * - `whiteListedNames` / `whiteListedNamespaces`: names (or prefixes) always accepted, as
 *   environment and as configuration variables.
 * - `blackListedNames`: names the device sets itself (API keys, the device's own identity); they
 *   are refused as environment and as configuration variables.
 */
export interface VariableRules {
  reservedNames: string[];
  reservedNamespaces: string[];
  whiteListedNames: string[];
  whiteListedNamespaces: string[];
  blackListedNames: string[];
}

const deviceSetNames = [
  "API_KEY",
  "SUPERVISOR_API_KEY",
  "DEVICE_API_KEY",
  "DEVICE_UUID",
  "DEVICE_TYPE",
  "DEVICE_ARCH",
  "DEVICE_NAME_AT_INIT",
  "APP_ID",
  "APP_NAME",
  "APP_UUID",
  "APP_LOCK_PATH",
  "SERVICE_NAME",
  "SUPERVISOR_ADDRESS",
  "SUPERVISOR_HOST",
  "SUPERVISOR_PORT",
  "SUPERVISOR_VERSION",
  "HOST_OS_VERSION",
];

/**
 * Defaults when the server configuration sets nothing:
 * - reserved names `RESIN`, `BALENA`, `USER` and the bare namespaces `RESIN_`, `BALENA_`;
 * - reserved namespaces `RESIN_` and `BALENA_`;
 * - whitelisted names `BALENA_APP_RESTART_POLICY`, `BALENA_APP_RESTART_RETRIES` and their
 *   `RESIN_` twins (service settings, not OS settings); no whitelisted namespace;
 * - blacklisted: the names the supervisor injects itself (`BALENA_API_KEY`,
 *   `BALENA_SUPERVISOR_API_KEY`, `BALENA_DEVICE_UUID`, `BALENA_DEVICE_TYPE`, `BALENA_APP_ID`,
 *   `BALENA_SUPERVISOR_ADDRESS`, `BALENA_HOST_OS_VERSION`, …) in both namespaces.
 */
export const DEFAULT_VARIABLE_RULES: VariableRules = {
  reservedNames: ["RESIN", "BALENA", "USER", "RESIN_", "BALENA_"],
  reservedNamespaces: ["RESIN_", "BALENA_"],
  whiteListedNames: [
    "BALENA_APP_RESTART_POLICY",
    "BALENA_APP_RESTART_RETRIES",
    "RESIN_APP_RESTART_POLICY",
    "RESIN_APP_RESTART_RETRIES",
  ],
  whiteListedNamespaces: [],
  blackListedNames: deviceSetNames.flatMap((name) => [`BALENA_${name}`, `RESIN_${name}`]),
};

/** Texts of the name rules (spec 2 §5 "Variables"). */
export const VARIABLE_TEXTS = {
  nameRequired: "A name is required",
  envNameStart: "The name must start with a letter",
  envNameCharacters: "The name can only contain letters, digits and underscores",
  configNameStart: "The name must start with a letter",
  configNameCharacters: "The name can only contain letters, digits, underscores or a colon",
  configNameNamespace: "Configuration variable names must begin with {namespaces}",
  reserved: "This environment variable is reserved and cannot be used.",
  configReserved: "This configuration variable is reserved and cannot be used.",
  isConfigVariable: "Configuration variables are managed through the Configuration page.",
  /** The hint next to an environment variable name in a reserved namespace (spec 2 §5). */
  namespaceNotice:
    "Variables beginning with {namespaces} configure OS features and must be managed on the Configuration page.",
  alreadyExists: "A variable with this name already exists: names must be unique",
  valueTooLong: "The value must be at most 100,000 characters",
  valueRequired: "A value is required",
  integerRequired: "The value must be a whole number",
  fileNotPng: "The file must be a PNG image",
  fileTooLarge: "The file is too large",
} as const;

function namespaceList(namespaces: readonly string[]): string {
  if (namespaces.length <= 1) return namespaces.join("");
  return `${namespaces.slice(0, -1).join(", ")} or ${namespaces[namespaces.length - 1]}`;
}

function isWhiteListed(name: string, rules: VariableRules): boolean {
  return rules.whiteListedNames.includes(name) || rules.whiteListedNamespaces.some((ns) => name.startsWith(ns));
}

/** Whether `name` begins with one of the reserved namespaces (BALENA_, RESIN_ by default). */
export function isConfigVariableName(name: string, rules: VariableRules = DEFAULT_VARIABLE_RULES): boolean {
  return rules.reservedNamespaces.some((ns) => name.startsWith(ns));
}

/**
 * The first problem of an environment variable name (fleet, service, device or device-service
 * variable), or undefined when it is accepted.
 */
export function envVarNameProblem(name: string, rules: VariableRules = DEFAULT_VARIABLE_RULES): string | undefined {
  if (name === "") return VARIABLE_TEXTS.nameRequired;
  if (isWhiteListed(name, rules)) return undefined;
  if (rules.reservedNames.includes(name) || rules.blackListedNames.includes(name)) return VARIABLE_TEXTS.reserved;
  if (!/^[A-Za-z]/.test(name)) return VARIABLE_TEXTS.envNameStart;
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) return VARIABLE_TEXTS.envNameCharacters;
  if (isConfigVariableName(name, rules)) return VARIABLE_TEXTS.isConfigVariable;
  return undefined;
}

/**
 * The hint for an environment variable name in a reserved namespace ("… configure OS features and
 * must be managed on the Configuration page."), or undefined.
 */
export function envVarNamespaceNotice(name: string, rules: VariableRules = DEFAULT_VARIABLE_RULES): string | undefined {
  if (isWhiteListed(name, rules) || !isConfigVariableName(name, rules)) return undefined;
  return VARIABLE_TEXTS.namespaceNotice.replace("{namespaces}", namespaceList(rules.reservedNamespaces));
}

/** The first problem of a configuration variable name (fleet or device), or undefined. */
export function configVarNameProblem(name: string, rules: VariableRules = DEFAULT_VARIABLE_RULES): string | undefined {
  if (name === "") return VARIABLE_TEXTS.nameRequired;
  if (isWhiteListed(name, rules)) return undefined;
  if (rules.blackListedNames.includes(name) || rules.reservedNames.includes(name)) return VARIABLE_TEXTS.configReserved;
  if (!/^[A-Za-z]/.test(name)) return VARIABLE_TEXTS.configNameStart;
  if (!/^[A-Za-z][A-Za-z0-9_:]*$/.test(name)) return VARIABLE_TEXTS.configNameCharacters;
  if (rules.reservedNamespaces.length > 0 && !isConfigVariableName(name, rules)) {
    return VARIABLE_TEXTS.configNameNamespace.replace("{namespaces}", namespaceList(rules.reservedNamespaces));
  }
  return undefined;
}

/**
 * Whether a change of this configuration variable reboots the device: the boot configuration
 * (`BALENA_HOST_CONFIG_*`) and persistent logging. The server's schema (`GET /config/vars`)
 * marks the same ones `will_reboot`; the simulated device reboots for them.
 */
export function configVariableRebootsDevice(name: string): boolean {
  return /^(BALENA|RESIN)_(HOST_CONFIG_|SUPERVISOR_PERSISTENT_LOGGING$)/.test(name);
}

/** The problem of a variable value (any kind), or undefined. */
export function variableValueProblem(value: string): string | undefined {
  return value.length > VARIABLE_VALUE_MAX_LENGTH ? VARIABLE_TEXTS.valueTooLong : undefined;
}

/** An integer-typed value parsed from the entered string (spec 2 §5), or undefined when it is not one. */
export function parseIntegerVariable(value: string): number | undefined {
  const trimmed = value.trim();
  if (!/^[-+]?\d+$/.test(trimmed)) return undefined;
  const parsed = Number.parseInt(trimmed, 10);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

/**
 * The problem of a file-type value (spec 2 §5: a data URL, PNG only, at most `maxLength`
 * characters), or undefined.
 */
export function fileVariableProblem(value: string, maxLength: number = FILE_VARIABLE_MAX_LENGTH): string | undefined {
  // A PNG's signature (89 50 4E 47 0D 0A 1A 0A) is "iVBORw0KGgo" in base64.
  if (!/^data:image\/png;base64,iVBORw0KGgo[A-Za-z0-9+/]*=*$/.test(value)) return VARIABLE_TEXTS.fileNotPng;
  if (value.length > maxLength) return VARIABLE_TEXTS.fileTooLarge;
  return undefined;
}
