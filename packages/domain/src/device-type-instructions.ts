/**
 * Installation instructions from a device type's contract (spec 2 §7 "Device type instructions
 * load per contract"), as balena-sdk's `deviceType.getInstructions` computes them: the install
 * method from `data.flashProtocol` / `data.media.defaultBoot`, then balenaOS's step templates
 * filled with the device type's own (interpolated) `partials`. balena-sdk compiles the templates
 * with Handlebars, which evaluates generated code, and the dashboard's Content Security Policy
 * (script-src 'self') forbids that; this small interpreter handles the constructs the templates
 * use (`{{path}}`, `{{{path}}}`, `{{#each path}}…{{/each}}`, `{{#if path}}…{{/if}}`,
 * `{{resolveContractAlias path}}`, `.[0]` indexes) and never evaluates code.
 */

type Json = unknown;

/** The host OS step templates, per install method (balena-sdk's hardcoded balenaOS contract, Apache-2.0). */
const BALENA_OS_PARTIALS: Record<string, string[]> = {
  image: ["{{#each deviceType.partials.instructions}}{{{this}}} {{/each}}"],
  internalFlash: [
    "{{#each deviceType.partials.connectDevice}}{{{this}}} {{/each}}",
    "Write the {{name}} file you downloaded to the {{deviceType.name}}. We recommend using [Etcher](https://etcher.balena.io/).",
    "Wait for writing of {{name}} to complete.",
    "{{#each deviceType.partials.disconnectDevice}}{{{this}}} {{/each}}",
    "{{{deviceType.partials.bootDevice}}} to boot the device.",
  ],
  externalFlash: [
    "{{#each deviceType.partials.instructions}}{{{this}}} {{/each}}",
    "Insert the {{resolveContractAlias deviceType.data.media.altBoot.[0]}} to the host machine.",
    "Write the {{name}} file you downloaded to the {{resolveContractAlias deviceType.data.media.altBoot.[0]}}. We recommend using [Etcher](https://etcher.balena.io/).",
    "Wait for writing of {{name}} to complete.",
    "Remove the {{resolveContractAlias deviceType.data.media.altBoot.[0]}} from the host machine.",
    "Insert the freshly flashed {{resolveContractAlias deviceType.data.media.altBoot.[0]}} into the {{deviceType.name}}.",
    "Warning! This will also completely erase internal storage medium, so please make a backup first.",
    "{{#each deviceType.partials.bootDeviceExternal}}{{{this}}} {{/each}}",
    "Wait for the {{deviceType.name}} to finish flashing and shutdown. {{#if deviceType.partials.flashIndicator}}Please wait until {{deviceType.partials.flashIndicator}}.{{/if}}",
    "Remove the {{resolveContractAlias deviceType.data.media.altBoot.[0]}} from the {{deviceType.name}}.",
    "{{#each deviceType.partials.bootDeviceInternal}}{{{this}}} {{/each}}",
    "{{{deviceType.partials.bootDevice}}} to boot the device.",
  ],
  externalBoot: [
    "Insert the {{resolveContractAlias deviceType.data.media.defaultBoot}} to the host machine.",
    "Write the {{name}} file you downloaded to the {{resolveContractAlias deviceType.data.media.defaultBoot}}. We recommend using [Etcher](https://etcher.balena.io/).",
    "Wait for writing of {{name}} to complete.",
    "Remove the {{resolveContractAlias deviceType.data.media.defaultBoot}} from the host machine.",
    "Insert the freshly flashed {{resolveContractAlias deviceType.data.media.defaultBoot}} into the {{deviceType.name}}.",
    "{{{deviceType.partials.bootDevice}}} to boot the device.",
  ],
  jetsonFlash: [
    "To provision {{deviceType.name}}, follow the instructions using our [Jetson Flash tool](https://github.com/balena-os/jetson-flash/blob/master/docs/{{deviceType.slug}}.md) to make the process more streamlined.",
  ],
  usbMassStorage: ["{{#each deviceType.partials.instructions}}{{{this}}}\n{{/each}}"],
};

const CONTRACT_ALIASES: Record<string, string> = { sdcard: "SD card", usb_mass_storage: "USB key" };

const record = (value: Json): Record<string, Json> | undefined =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, Json>) : undefined;

/** balena-sdk's install method of a contract; undefined when the contract does not say. */
export function installMethod(contract: Json): string | undefined {
  const data = record(record(contract)?.data);
  const flashProtocol = data?.flashProtocol;
  if (typeof flashProtocol === "string" && flashProtocol)
    return flashProtocol === "RPIBOOT" ? "internalFlash" : flashProtocol;
  const defaultBoot = record(data?.media)?.defaultBoot;
  if (typeof defaultBoot !== "string" || !defaultBoot) return undefined;
  return defaultBoot === "image" ? "image" : defaultBoot === "internal" ? "externalFlash" : "externalBoot";
}

/** `a.b.[0].c` in `context`; `this` is the current item of an `each`. */
function lookup(context: Json, path: string, item: Json): Json {
  if (path === "this") return item;
  let value: Json = context;
  for (const part of path.split(".")) {
    const key = part.replace(/^\[(.*)\]$/, "$1");
    const object = record(value);
    // Own properties only: nothing of Object.prototype (`constructor`, `__proto__`) is reachable.
    value = Array.isArray(value) ? value[Number(key)] : object && Object.hasOwn(object, key) ? object[key] : undefined;
    if (value === undefined || value === null) return undefined;
  }
  return value;
}

/** A value as Handlebars prints it: arrays joined by commas, nothing for null or undefined. */
const printed = (value: Json): string =>
  value === undefined || value === null ? "" : Array.isArray(value) ? value.map(printed).join(",") : String(value);

const truthy = (value: Json) => (Array.isArray(value) ? value.length > 0 : Boolean(value));

/** Fills one template; blocks may not nest (the templates above do not). */
export function fillTemplate(template: string, context: Json, item?: Json): string {
  const blocks = /\{\{#(each|if) ([^}]+)\}\}([\s\S]*?)\{\{\/\1\}\}/g;
  const expanded = template.replace(blocks, (_all, kind: string, path: string, body: string) => {
    const value = lookup(context, path.trim(), item);
    if (kind === "if") return truthy(value) ? fillTemplate(body, context, item) : "";
    return Array.isArray(value) ? value.map((entry) => fillTemplate(body, context, entry)).join("") : "";
  });
  return expanded.replace(/\{\{\{?\s*([^}]+?)\s*\}?\}\}/g, (_all, expression: string) => {
    const [first, second] = expression.split(/\s+/);
    if (first === "resolveContractAlias" && second) {
      const slug = printed(lookup(context, second, item));
      return CONTRACT_ALIASES[slug] ?? slug;
    }
    return printed(lookup(context, first ?? "", item));
  });
}

/** Each partial list of `partials` filled against `context`, nested lists per operating system too. */
function fillPartials(partials: Json, context: Json): Json {
  if (Array.isArray(partials)) {
    return partials.flatMap((partial) =>
      typeof partial === "string"
        ? fillTemplate(partial, context)
            .split("\n")
            .map((line) => line.trim())
            .filter(Boolean)
        : [],
    );
  }
  const entries = record(partials);
  return entries
    ? Object.fromEntries(Object.entries(entries).map(([key, value]) => [key, fillPartials(value, context)]))
    : partials;
}

/** A step as text: markdown links keep their words, HTML tags go. */
export const instructionText = (step: string) =>
  step
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .replace(/\s+/g, " ")
    .trim();

/**
 * The steps that install balenaOS on a device of this contract, as text; [] when the contract
 * names no install method or has no partials.
 */
export function deviceTypeInstructions(contract: Json): string[] {
  const method = installMethod(contract);
  const own = record(contract);
  if (!method || !own?.partials) return [];
  const deviceType = { ...own, partials: fillPartials(own.partials, own) };
  const templates = BALENA_OS_PARTIALS[method];
  if (!templates) return [];
  const steps = fillPartials(templates, { name: "balenaOS", deviceType }) as string[];
  return steps.map(instructionText).filter(Boolean);
}
