import { runBatch } from "../devices/batch.ts";

/**
 * Staged variable edits (spec 2 §4): changes collect on the page — rows become added, updated
 * (new value shown) or deleted (struck through) — each can be undone, all reverted, or all
 * applied together.
 */

/** The service id of a variable for all services (spec 2 §3). */
export const ALL_SERVICES_ID = 0;

/** A stored variable as the editors show it. `scope` says where it is stored (fleet, service, device…). */
export interface StoredVariable {
  key: string;
  id: number;
  name: string;
  value: string;
  /** 0 = all services (spec 2 §3); otherwise a service id. */
  serviceId: number;
}

export type StagedChange =
  | { kind: "add"; key: string; name: string; value: string; serviceId: number }
  | { kind: "update"; key: string; value: string }
  | { kind: "delete"; key: string };

export type RowState = "stored" | "added" | "updated" | "deleted";

export interface ShownRow extends Omit<StoredVariable, "id"> {
  id: number | undefined;
  state: RowState;
  /** The stored value of an updated row (the new one is `value`). */
  before?: string;
}

/** Stage a change; a later change of the same row replaces the earlier one. */
export function stage(changes: readonly StagedChange[], change: StagedChange): StagedChange[] {
  const existing = changes.find((c) => c.key === change.key);
  // Editing a row that is staged as added keeps it an addition with the new value.
  if (existing?.kind === "add" && change.kind === "update") {
    return changes.map((c) => (c.key === change.key ? { ...existing, value: change.value } : c));
  }
  // Deleting a row that was only staged as added simply drops the addition.
  if (existing?.kind === "add" && change.kind === "delete") return changes.filter((c) => c.key !== change.key);
  return [...changes.filter((c) => c.key !== change.key), change];
}

export const undo = (changes: readonly StagedChange[], key: string) => changes.filter((c) => c.key !== key);

/** The rows as shown: stored rows with their staged state, then the staged additions. */
export function shownRows(stored: readonly StoredVariable[], changes: readonly StagedChange[]): ShownRow[] {
  const rows: ShownRow[] = stored.map((row) => {
    const change = changes.find((c) => c.key === row.key);
    if (change?.kind === "update") return { ...row, state: "updated", value: change.value, before: row.value };
    if (change?.kind === "delete") return { ...row, state: "deleted" };
    return { ...row, state: "stored" };
  });
  for (const change of changes) {
    if (change.kind === "add") {
      rows.push({
        key: change.key,
        id: undefined,
        name: change.name,
        value: change.value,
        serviceId: change.serviceId,
        state: "added",
      });
    }
  }
  return rows;
}

/** Names already taken in a scope (stored and not being deleted, or staged as added). */
export function takenNames(rows: readonly ShownRow[], serviceId: number): string[] {
  return rows.filter((row) => row.serviceId === serviceId && row.state !== "deleted").map((row) => row.name);
}

export interface VariableWriter {
  create(change: Extract<StagedChange, { kind: "add" }>): Promise<unknown>;
  update(row: StoredVariable, value: string): Promise<unknown>;
  remove(row: StoredVariable): Promise<unknown>;
}

export type ApplyResult = { failed: Array<{ change: StagedChange; error: unknown }>; succeeded: StagedChange[] };

/**
 * Applies the changes with at most `concurrency` calls in flight (50 by default, 10 from the
 * configuration page — spec 2 §7). Failed changes stay staged for another try.
 */
export async function applyChanges(
  stored: readonly StoredVariable[],
  changes: readonly StagedChange[],
  writer: VariableWriter,
  concurrency = 50,
): Promise<ApplyResult> {
  const byKey = new Map(stored.map((row) => [row.key, row]));
  const result = await runBatch(
    changes,
    (change) => {
      if (change.kind === "add") return writer.create(change);
      const row = byKey.get(change.key);
      if (!row) return Promise.reject(new Error("The variable no longer exists"));
      return change.kind === "update" ? writer.update(row, change.value) : writer.remove(row);
    },
    concurrency,
  );
  return {
    succeeded: result.succeeded,
    failed: result.failed.map((failure) => ({ change: failure.item, error: failure.error })),
  };
}

let nextKey = 0;
/** A key for a staged addition (stored rows use `{resource}:{id}`). */
export const newKey = () => `new:${++nextKey}`;
