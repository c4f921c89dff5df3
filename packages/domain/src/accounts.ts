import { z } from "zod";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./constants.ts";

/**
 * Account forms (spec 1 §5), shared by the server (which enforces them) and the dashboard (which
 * shows the same messages before sending). Messages are the spec's where it has them.
 */

export const TWO_FACTOR_CODE_LENGTH = 6;
export const RECOVERY_CODE_COUNT = 10;
/** API key expiry choices in days (spec 1 §9); a custom future date or never are the others. */
export const API_KEY_EXPIRY_DAYS = [1, 7, 30, 90] as const;
/** Account deletion signs out after this delay (spec 1 §9). */
export const ACCOUNT_DELETION_REDIRECT_MS = 2000;
/** Usernames are cut to this length in the user menu (spec 1 §2.5). */
export const USERNAME_MENU_MAX = 20;
export const ACCOUNT_TYPES = ["personal", "professional"] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

export const PASSWORDS_DONT_MATCH = "Passwords don't match";

const required = (what: string) => ({ error: `${what} is required` });

export const emailSchema = z
  .string(required("Email"))
  .trim()
  .min(1, "Email is required")
  .max(254, "Email is too long")
  .pipe(z.email({ error: "Please enter a valid email address" }));

export const passwordSchema = z
  .string(required("Password"))
  .min(1, "Password is required")
  .min(PASSWORD_MIN_LENGTH, `Password must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `Password must be at most ${PASSWORD_MAX_LENGTH} characters`);

/** A new password with its confirmation (reset form, change password). */
export const newPasswordSchema = z
  .object({ password: passwordSchema, confirmation: z.string() })
  .refine((value) => value.password === value.confirmation, {
    message: PASSWORDS_DONT_MATCH,
    path: ["confirmation"],
  });

export const loginSchema = z.object({
  username: z.string(required("Username")).trim().min(1, "Username is required"),
  password: z.string(required("Password")).min(1, "Password is required"),
});

export const profileSchema = z.object({
  first_name: z.string(required("First name")).trim().min(1, "First name is required").max(255),
  last_name: z.string(required("Last name")).trim().min(1, "Last name is required").max(255),
  company: z.string(required("Company")).trim().min(1, "Company is required").max(255),
  account_type: z.enum(ACCOUNT_TYPES, { error: "Account type is required" }),
});

export const changeEmailSchema = z.object({
  email: emailSchema,
  password: z.string(required("Password")).min(1, "Password is required"),
});

export const changePasswordSchema = z.object({
  currentPassword: z.string(required("Current password")).min(1, "Current password is required"),
  password: passwordSchema,
});

export const twoFactorCodeSchema = z
  .string(required("Code"))
  .trim()
  .regex(new RegExp(`^\\d{${TWO_FACTOR_CODE_LENGTH}}$`), `The code is ${TWO_FACTOR_CODE_LENGTH} digits`);

/** The numeric two-factor error codes (spec 1 §8) the password reset answers carry as `errorCode`. */
export const TWO_FACTOR_ERROR_CODES = {
  two_factor_code_required: 1,
  two_factor_code_invalid: 2,
  reset_code_expired: 3,
  reset_code_invalid: 4,
} as const;

/** Appended to every account deletion error (spec 1 §8). */
export const CONTACT_SUPPORT = "Please contact support.";

/** A recovery code as shown to the user: 10 characters in two groups of five (`abcde-12345`). */
export const recoveryCodeSchema = z
  .string(required("Code"))
  .trim()
  .min(1, "Code is required")
  .max(64, "The code is too long");

export const passwordResetRequestSchema = z.object({
  "g-recaptcha-response": z.string().max(10_000).optional(),
});

export const passwordResetSchema = z.object({
  code: z.string(required("Code")).trim().min(1, "Code is required").max(256),
  password: passwordSchema,
  twoFactorCode: z.string().trim().max(16).optional(),
});

/** Re-authentication (POST /user/v1/refresh-token) and account deletion. */
export const passwordConfirmationSchema = z.object({
  password: z.string(required("Password")).min(1, "Password is required").max(1024),
});

export const sshKeyImportSchema = z.object({
  url: z
    .string(required("URL"))
    .trim()
    .min(1, "URL is required")
    .max(2048)
    .pipe(z.url({ protocol: /^https?$/, error: "Please enter a valid http(s) URL" })),
});

/** Two-factor error codes (spec 1 §8). */
export const TWO_FACTOR_ERRORS = {
  1: "code required",
  2: "code invalid",
  3: "reset code expired",
  4: "reset code invalid",
} as const;
