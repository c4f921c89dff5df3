import type { FieldDefinition, FieldType, NavigationDefinition, ResourceDefinition } from "../odata/model.ts";

/**
 * A small vocabulary to write the model in balena's terms: columns, foreign keys, their
 * synonyms (balena exposes one column under several names, e.g. `user` and `includes__user`),
 * and to-many navigations. Synonyms are reachable by name but left out of the default `$select`,
 * as in balena's API.
 */

type FieldOptions = { column?: string; writable?: boolean; required?: boolean };

export const field = (name: string, type: FieldType, options: FieldOptions = {}): FieldDefinition => ({
  name,
  type,
  ...options,
});

/** Fields written by clients: `writable`, and `required` on POST when the option says so. */
export const editable = (name: string, type: FieldType, required = false): FieldDefinition =>
  field(name, type, { writable: true, required });

/** A foreign key (answered as `{"__id": n}` unless expanded; also a to-one navigation). */
export const ref = (name: string, target: string, options: FieldOptions = {}): FieldDefinition => ({
  name,
  type: "Integer",
  references: target,
  ...options,
});

/** Another name for a field: same column, same meaning, not in the default `$select`. */
export const synonym = (name: string, of: FieldDefinition): FieldDefinition => ({
  ...of,
  name,
  column: of.column ?? of.name,
  // Writable like the field it stands for, but never required: a body names one or the other.
  required: false,
  selectByDefault: false,
});

/** A field computed in SQL from the row (never writable). */
export const computed = (name: string, type: FieldType, sql: (row: string) => string): FieldDefinition => ({
  name,
  type,
  computed: sql,
});

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Rows of `target` whose `column` points at this row, under every given name. */
export function many(names: string[], target: string, column: string): NavigationDefinition[] {
  return names.map((name) => ({
    name,
    target,
    join: (self: string, other: string) => `${other}.${quote(column)} = ${self}."id"`,
  }));
}

/** Rows of `target` reached through a link table: `link.from = self.id AND link.to = target.id`. */
export function through(
  names: string[],
  target: string,
  link: { table: string; from: string; to: string },
): NavigationDefinition[] {
  return names.map((name) => ({
    name,
    target,
    join: (self: string, other: string) =>
      `EXISTS (SELECT 1 FROM ${quote(link.table)} AS l WHERE l.${quote(link.from)} = ${self}."id" AND l.${quote(link.to)} = ${other}."id")`,
  }));
}

export const createdAt = field("created_at", "Date Time");
export const modifiedAt = field("modified_at", "Date Time");
export const id = field("id", "Integer");

export function resource(definition: ResourceDefinition): ResourceDefinition {
  return definition;
}

/** Tags and variables: a name/value pair owned by a parent, unique per parent. */
export function pairResource(options: {
  name: string;
  aliases?: string[];
  table: string;
  parent: { field: string; target: string; synonyms?: string[] };
  key: string;
}): ResourceDefinition {
  const parent = ref(options.parent.field, options.parent.target, { writable: true, required: true });
  return {
    name: options.name,
    ...(options.aliases ? { aliases: options.aliases } : {}),
    table: options.table,
    alternateKeys: [[options.parent.field, options.key]],
    fields: [
      id,
      createdAt,
      parent,
      ...(options.parent.synonyms ?? []).map((name) => synonym(name, parent)),
      editable(options.key, "Text", true),
      editable("value", "Text", true),
    ],
  };
}
