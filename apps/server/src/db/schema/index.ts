export * from "./accounts.ts";
export * from "./devices.ts";
export * from "./fleets.ts";
export * from "./organizations.ts";
export * from "./releases.ts";
