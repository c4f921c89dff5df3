import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FlotillaError } from "../errors.ts";
import { parseInput } from "./validation.ts";

const refusal = (schema: z.ZodType, input: unknown) => {
  try {
    parseInput(schema, input);
  } catch (error) {
    return error instanceof FlotillaError ? error.message : String(error);
  }
  return "accepted";
};

describe("input problems", () => {
  it("are sentences naming the field, never zod's own words", () => {
    const schema = z.object({ subject: z.string(), count: z.number().optional(), kind: z.enum(["a", "b"]).optional() });
    expect(refusal(schema, {})).toBe('"subject" is required.');
    expect(refusal(schema, { subject: 5 })).toBe('"subject" must be text.');
    expect(refusal(schema, { subject: "x", count: "3" })).toBe('"count" must be a number.');
    expect(refusal(schema, { subject: "x", kind: "c" })).toBe('"kind" has a value that is not allowed.');
    for (const input of [{}, { subject: 5 }, { subject: "x", kind: "c" }]) {
      expect(refusal(schema, input)).not.toMatch(/Invalid input|expected string/);
    }
    const strict = z.object({ subject: z.string() }).strict();
    expect(refusal(strict, { subject: "x", extra: 1 })).toBe('The request body has an unknown field: "extra".');
    expect(refusal(strict, { subject: "x", a: 1, b: 2 })).toBe('The request body has unknown fields: "a", "b".');
    // A schema's own message stays, after its field.
    expect(refusal(z.object({ name: z.string().min(3, "needs 3 characters") }), { name: "a" })).toBe(
      "name: needs 3 characters",
    );
  });
});
