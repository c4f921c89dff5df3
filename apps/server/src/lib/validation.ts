import { z } from "zod";
import { FlotillaError } from "../errors.ts";

/** Parses a request body or query with a zod schema; the first problem becomes a 400 naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".");
  throw new FlotillaError("bad_request", issue ? issueText(issue, field) : "Invalid request.");
}

const KINDS: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  date: "a date",
};

/**
 * An input problem as a sentence that names the field (never zod's own "Invalid input: expected
 * string, received number", which people should not read): the schema's own message when it has
 * one, else what the field must be.
 */
export function issueText(issue: { code: string; message: string; expected?: unknown }, field: string | undefined) {
  const name = field ? `"${field}"` : "The request body";
  if (/^Invalid input: expected/.test(issue.message)) {
    if (/received undefined$/.test(issue.message)) return `${name} is required.`;
    const expected = typeof issue.expected === "string" ? (KINDS[issue.expected] ?? issue.expected) : "another kind";
    return `${name} must be ${expected}.`;
  }
  if (/^Invalid (input|option|value)/.test(issue.message)) return `${name} has a value that is not allowed.`;
  if (/^Unrecognized key/.test(issue.message)) {
    const fields = issue.message.replace(/^Unrecognized keys?:\s*/, "");
    return `${name} has ${/^Unrecognized keys/.test(issue.message) ? "unknown fields" : "an unknown field"}: ${fields}.`;
  }
  return field ? `${field}: ${issue.message}` : issue.message;
}

/**
 * A row id as balena's clients send it: a number or a string of digits (balena-sdk sends
 * `{appId: "3"}` in some bodies, numbers in others).
 */
export const idInput = z.preprocess(
  (value) => (typeof value === "string" && /^\d{1,10}$/.test(value) ? Number(value) : value),
  z
    .number({ error: "must be an id (a whole number, or a string of digits)" })
    .int("must be an id (a whole number, or a string of digits)")
    .positive("must be an id (a whole number, or a string of digits)")
    .max(2147483647, "must be an id (a whole number, or a string of digits)"),
);
