import { FlotillaError } from "../errors.ts";
import type { Model, ResourceDefinition } from "./model.ts";

/** The fields PostgreSQL (and PGlite, which speaks its protocol) put on an error. */
type PostgresError = Error & { code: string; detail?: string; table?: string; column?: string; constraint?: string };

function isPostgresError(error: unknown): error is PostgresError {
  if (!(error instanceof Error) || !("severity" in error)) return false;
  const code: unknown = (error as { code?: unknown }).code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code);
}

/**
 * Turns what the database refused into the client's error, naming fields by their API names:
 * unique 409 (`"uuid" must be unique.`: pinejs-client's upsert looks for /unique/i) unless the
 * index is one of the resource's data rules (400 with the rule's text, as pinejs), foreign key,
 * not-null, check and bad-value errors 400. Anything else is left alone (a 500).
 */
export function fromDatabaseError(
  error: unknown,
  model: Model,
  fallback?: ResourceDefinition,
): FlotillaError | undefined {
  if (!isPostgresError(error)) return undefined;
  const resource = resourceOfTable(model, error.table) ?? fallback;
  const names = (columns: string[]) => columns.map((column) => `"${fieldName(resource, column)}"`).join(" and ");
  const fail = (code: "bad_request" | "conflict", message: string) =>
    new FlotillaError(code, message, { cause: error });
  const keyColumns = columnsOfDetail(error.detail);
  switch (error.code) {
    case "23505": {
      const rule = error.constraint ? resource?.rules?.[error.constraint] : undefined;
      if (rule) return fail("bad_request", rule);
      return fail(
        "conflict",
        keyColumns.length > 0 ? `${names(keyColumns)} must be unique.` : "A value must be unique.",
      );
    }
    case "23503": {
      const referencing = /still referenced from table "([^"]+)"/.exec(error.detail ?? "");
      if (referencing) {
        const other = resourceOfTable(model, referencing[1])?.name ?? "another resource";
        return fail("bad_request", `This ${fallback?.name ?? "row"} is still referenced by ${other}.`);
      }
      const field = keyColumns.length > 0 ? names(keyColumns) : "A reference";
      return fail("bad_request", `${field} does not refer to an existing row.`);
    }
    case "23502":
      return fail("bad_request", `"${fieldName(resource, error.column ?? "")}" must not be null.`);
    case "23514":
      return fail(
        "bad_request",
        `A value is not allowed on ${resource?.name ?? "this resource"} (${error.constraint ?? "check"}).`,
      );
    case "42804":
    case "42883":
    case "42725":
      return fail("bad_request", "The types in the request do not fit together.");
    case "54001":
      return fail("bad_request", "The request is too complex.");
    default:
      // Class 22, data exceptions: invalid text for a type, out of range, division by zero, …
      // PostgreSQL's message names the type and the client's own value, nothing internal.
      if (error.code.startsWith("22")) return fail("bad_request", error.message);
      return undefined;
  }
}

/** `Key (device, name)=(1, x) already exists.` → ["device", "name"]; expressions keep their column. */
function columnsOfDetail(detail: string | undefined): string[] {
  const match = /^Key \((.*?)\)=\(/.exec(detail ?? "");
  if (!match?.[1]) return [];
  return match[1].split(", ").map((part) => /([A-Za-z_][A-Za-z0-9_]*)\)*$/.exec(part)?.[1] ?? part);
}

function resourceOfTable(model: Model, table: string | undefined): ResourceDefinition | undefined {
  if (!table) return undefined;
  return model.resources().find((resource) => resource.table.split(".").at(-1) === table);
}

function fieldName(resource: ResourceDefinition | undefined, column: string): string {
  return resource?.fields.find((field) => (field.column ?? field.name) === column)?.name ?? column;
}
