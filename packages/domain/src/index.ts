export * from "./accounts.ts";
export * from "./constants.ts";
export * from "./errors.ts";
export * from "./fleet-types.ts";
export * from "./names.ts";
export * from "./permissions.ts";
export * from "./proof-of-work.ts";
export * from "./ssh-keys.ts";
