import type { z } from "zod";
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
