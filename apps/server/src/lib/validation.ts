import { z } from "zod";
import { FlotillaError } from "../errors.ts";

/** Parses a request body or query with a zod schema; the first problem becomes a 400 naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".");
  throw new FlotillaError(
    "bad_request",
    field ? `${field}: ${issue?.message}` : (issue?.message ?? "Invalid request."),
  );
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
