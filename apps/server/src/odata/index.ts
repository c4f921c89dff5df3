/** The OData engine of the data API (/v7). See handle.ts for the entry point. */
export type { ODataUrl } from "./ast.ts";
export { type BatchRequest, handleODataBatch, MAX_BATCH_REQUESTS, parseBatch } from "./batch.ts";
export { type CompiledQuery, compileRead, type ReadQuery } from "./compile-read.ts";
export { fromDatabaseError } from "./database-errors.ts";
export {
  executeCreate,
  executeDelete,
  executeRead,
  executeUpdate,
  type ODataContext,
  type ODataResponse,
} from "./execute.ts";
export { handleODataRequest, type ODataRequest } from "./handle.ts";
export type { AuditActorRef, HookContext, Hooks, ResourceHooks } from "./hooks.ts";
export * from "./model.ts";
export { LIMITS, parseFilterExpression, parseODataUrl } from "./parse.ts";
export {
  ACTOR_ALIAS,
  type Access,
  type Action,
  allowAll,
  createPermissions,
  denyAll,
  type Permissions,
} from "./permissions.ts";
