import type { Row, Tx } from "../db/index.ts";
import type { WriteValues } from "./compile-write.ts";
import type { Model, ResourceDefinition } from "./model.ts";
import type { Permissions } from "./permissions.ts";

export type AuditActorRef = {
  user?: number | undefined;
  apiKey?: number | undefined;
  clientAddress?: string | undefined;
};

/**
 * What a hook gets. Hooks run inside the write's transaction (use `tx`, never another
 * connection) and may throw a `FlotillaError` to refuse the write: everything rolls back.
 */
export type HookContext = {
  tx: Tx;
  /** Work to do once the write has committed (e.g. send a mail); skipped when it rolls back. */
  afterCommit(task: () => Promise<void> | void): void;
  actorId: number | undefined;
  /** What kind of actor writes (`user`, `application`, `device`, `guest`); undefined for the server's own work. */
  actorType?: string | undefined;
  /** When the caller's session was authenticated (ms); undefined for API keys. */
  authTime: number | undefined;
  /** The caller's token was issued to an OAuth application (lib/delegation.ts): no credential writes. */
  delegated: boolean | undefined;
  /** Who writes, for the audit log: the user, the API key used, the client address. */
  auditActor: AuditActorRef | undefined;
  permissions: Permissions;
  model: Model;
  resource: ResourceDefinition;
};

export type ResourceHooks = {
  /** Before the INSERT; may change `body` (e.g. fill server-chosen fields, even non-writable ones). */
  beforeCreate?(args: HookContext & { body: WriteValues }): Promise<void> | void;
  /**
   * `beforeCreate` over the many rows of a `$batch` group's POSTs (execute.ts executeCreateMany),
   * in one go: where the resource has it, its rows are checked together and then inserted in one
   * statement; without it, each row takes `beforeCreate` and its INSERT in turn.
   */
  beforeCreateMany?(args: HookContext & { bodies: WriteValues[] }): Promise<void> | void;
  afterCreate?(args: HookContext & { body: WriteValues; id: number }): Promise<void> | void;
  /** Before the UPDATE of the rows `ids`; may change `body`. */
  beforeUpdate?(args: HookContext & { ids: number[]; body: WriteValues }): Promise<void> | void;
  afterUpdate?(args: HookContext & { ids: number[]; body: WriteValues }): Promise<void> | void;
  beforeDelete?(args: HookContext & { ids: number[] }): Promise<void> | void;
  /** `rows` are the deleted rows as stored (column names). */
  afterDelete?(args: HookContext & { ids: number[]; rows: Row[] }): Promise<void> | void;
};

/** Hooks by resource canonical name. */
export type Hooks = Readonly<Record<string, ResourceHooks | undefined>>;
