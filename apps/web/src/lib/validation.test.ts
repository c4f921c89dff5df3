import { loginSchema, newPasswordSchema, PASSWORDS_DONT_MATCH, passwordSchema } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import { fieldErrors, hasErrors } from "./validation.ts";

describe("fieldErrors", () => {
  it("gives the first domain message per field", () => {
    expect(fieldErrors(loginSchema, { username: " ", password: "" })).toEqual({
      username: "Username is required",
      password: "Password is required",
    });
    expect(fieldErrors(newPasswordSchema, { password: "12345678", confirmation: "x" })).toEqual({
      confirmation: PASSWORDS_DONT_MATCH,
    });
    expect(fieldErrors(passwordSchema, "short")[""]).toBe("Password must be at least 8 characters");
    expect(fieldErrors(passwordSchema, "x".repeat(65))[""]).toBe("Password must be at most 64 characters");
  });

  it("is empty for valid input", () => {
    const errors = fieldErrors(loginSchema, { username: "ann", password: "x" });
    expect(errors).toEqual({});
    expect(hasErrors(errors)).toBe(false);
  });
});
