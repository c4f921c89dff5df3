export * from "./constants.ts";
export * from "./errors.ts";
