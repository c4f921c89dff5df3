import { loginSchema } from "@flotilla/domain";
import { type FieldErrors, fieldErrors } from "../../lib/validation.ts";

/**
 * The login form's rules (packages/domain loginSchema), in their own chunk: the schemas bring zod,
 * which the login page does not need before a person submits (issue 17, first visit speed).
 */
export const loginErrors = (value: { username: string; password: string }): FieldErrors =>
  fieldErrors(loginSchema, value);
