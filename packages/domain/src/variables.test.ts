import { describe, expect, it } from "vitest";
import { errorCatalogue } from "./errors.ts";
import {
  ALL_SERVICES,
  configVariableRebootsDevice,
  configVarNameProblem,
  DEFAULT_VARIABLE_RULES,
  envVarNameProblem,
  envVarNamespaceNotice,
  fileVariableProblem,
  parseIntegerVariable,
  VARIABLE_TEXTS,
  type VariableRules,
  variableValueProblem,
} from "./variables.ts";

const reserved = "This environment variable is reserved and cannot be used.";
const configPage = "Configuration variables are managed through the Configuration page.";

describe("environment variable names (spec 2 §5)", () => {
  it.each(["GREETING", "a", "My_Var_2", "x1"])("accepts %s", (name) => {
    expect(envVarNameProblem(name)).toBeUndefined();
  });

  it.each([
    ["", "A name is required"],
    ["1ABC", "The name must start with a letter"],
    ["_ABC", "The name must start with a letter"],
    ["MY-VAR", "The name can only contain letters, digits and underscores"],
    ["MY:VAR", "The name can only contain letters, digits and underscores"],
    ["MY VAR", "The name can only contain letters, digits and underscores"],
    ["BALENA", reserved],
    ["RESIN", reserved],
    ["USER", reserved],
    ["BALENA_DEVICE_UUID", reserved],
    ["RESIN_SUPERVISOR_API_KEY", reserved],
    ["BALENA_HOST_CONFIG_gpu_mem", configPage],
    ["RESIN_SUPERVISOR_POLL_INTERVAL", configPage],
  ])("refuses %j with %s", (name, text) => {
    expect(envVarNameProblem(name)).toBe(text);
  });

  it("accepts whitelisted names even in a reserved namespace", () => {
    expect(envVarNameProblem("BALENA_APP_RESTART_POLICY")).toBeUndefined();
    const rules: VariableRules = { ...DEFAULT_VARIABLE_RULES, whiteListedNamespaces: ["BALENA_UI_"] };
    expect(envVarNameProblem("BALENA_UI_THEME", rules)).toBeUndefined();
  });

  it("blacklists from the configuration", () => {
    const rules: VariableRules = { ...DEFAULT_VARIABLE_RULES, blackListedNames: ["SECRET"] };
    expect(envVarNameProblem("SECRET", rules)).toBe(reserved);
  });

  it("gives the OS-features hint for namespaced names", () => {
    expect(envVarNamespaceNotice("BALENA_HOST_CONFIG_x")).toBe(
      "Variables beginning with RESIN_ or BALENA_ configure OS features and must be managed on the Configuration page.",
    );
    expect(envVarNamespaceNotice("GREETING")).toBeUndefined();
  });
});

describe("configuration variable names (spec 2 §5)", () => {
  it.each(["BALENA_HOST_CONFIG_gpu_mem", "RESIN_SUPERVISOR_POLL_INTERVAL", "BALENA_HOST_CONFIG_dtoverlay:1"])(
    "accepts %s",
    (name) => {
      expect(configVarNameProblem(name)).toBeUndefined();
    },
  );

  it.each([
    ["", "A name is required"],
    ["1BALENA", "The name must start with a letter"],
    ["BALENA_X-Y", "The name can only contain letters, digits, underscores or a colon"],
    ["GREETING", "Configuration variable names must begin with RESIN_ or BALENA_"],
    ["BALENA_API_KEY", "This configuration variable is reserved and cannot be used."],
  ])("refuses %j with %s", (name, text) => {
    expect(configVarNameProblem(name)).toBe(text);
  });

  it("needs no namespace when none is reserved, and accepts whitelisted names", () => {
    const open: VariableRules = { ...DEFAULT_VARIABLE_RULES, reservedNamespaces: [] };
    expect(configVarNameProblem("MY:SETTING", open)).toBeUndefined();
    const white: VariableRules = { ...DEFAULT_VARIABLE_RULES, whiteListedNames: ["LEGACY"] };
    expect(configVarNameProblem("LEGACY", white)).toBeUndefined();
    const ns: VariableRules = { ...DEFAULT_VARIABLE_RULES, whiteListedNamespaces: ["CUSTOM_"] };
    expect(configVarNameProblem("CUSTOM_THING", ns)).toBeUndefined();
  });
});

describe("values", () => {
  it("all services is key 0 (spec 2 §3, §9)", () => {
    expect(ALL_SERVICES).toBe(0);
  });

  it.each([
    ["64", 64],
    [" 128 ", 128],
    ["-5", -5],
    ["+7", 7],
    ["1.5", undefined],
    ["", undefined],
    ["12abc", undefined],
    ["99999999999999999999", undefined],
  ])("parses integer %j as %j", (value, parsed) => {
    expect(parseIntegerVariable(value)).toBe(parsed);
  });

  it("bounds values", () => {
    expect(variableValueProblem("x".repeat(100_000))).toBeUndefined();
    expect(variableValueProblem("x".repeat(100_001))).toBe(VARIABLE_TEXTS.valueTooLong);
  });

  it("accepts PNG data URLs only, up to the limit", () => {
    const png =
      "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    expect(fileVariableProblem(png)).toBeUndefined();
    expect(fileVariableProblem("data:image/jpeg;base64,/9j/4AAQ")).toBe(VARIABLE_TEXTS.fileNotPng);
    expect(fileVariableProblem("data:image/png;base64,R0lGODlh")).toBe(VARIABLE_TEXTS.fileNotPng);
    expect(fileVariableProblem(png, 20)).toBe(VARIABLE_TEXTS.fileTooLarge);
  });

  it("boot configuration and persistent logging reboot the device", () => {
    expect(configVariableRebootsDevice("BALENA_HOST_CONFIG_gpu_mem")).toBe(true);
    expect(configVariableRebootsDevice("RESIN_HOST_CONFIG_dtoverlay")).toBe(true);
    expect(configVariableRebootsDevice("BALENA_SUPERVISOR_PERSISTENT_LOGGING")).toBe(true);
    expect(configVariableRebootsDevice("BALENA_SUPERVISOR_POLL_INTERVAL")).toBe(false);
  });

  it("the catalogue carries the spec's texts", () => {
    expect(errorCatalogue.variable_reserved.text).toBe(reserved);
    expect(errorCatalogue.variable_is_config_variable.text).toBe(configPage);
    expect(errorCatalogue.variable_already_exists.text).toMatch(/unique/i);
    expect(errorCatalogue.variable_already_exists.text).toMatch(/already exists/);
  });
});
