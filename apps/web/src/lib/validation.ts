/**
 * Form validation with the packages/domain schemas (the ones the server enforces): the first
 * message per field, keyed by the field's path ("" for a schema over a single value).
 */
interface SafeParser {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly Issue[] } };
}
interface Issue {
  path: readonly PropertyKey[];
  message: string;
}

export type FieldErrors = Partial<Record<string, string>>;

export function fieldErrors(schema: SafeParser, value: unknown): FieldErrors {
  const result = schema.safeParse(value);
  if (result.success) return {};
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const key = issue.path.map(String).join(".");
    errors[key] ??= issue.message;
  }
  return errors;
}

export const hasErrors = (errors: FieldErrors) => Object.values(errors).some(Boolean);
