export * from "./accounts.ts";
export * from "./billing.ts";
export * from "./devices.ts";
export * from "./fleets.ts";
export * from "./identity.ts";
export * from "./organizations.ts";
export * from "./releases.ts";
export * from "./support.ts";
