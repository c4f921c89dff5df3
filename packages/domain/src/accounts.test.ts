import { describe, expect, it } from "vitest";
import {
  CONTACT_SUPPORT,
  changePasswordSchema,
  passwordResetSchema,
  profileSchema,
  sshKeyImportSchema,
  TWO_FACTOR_ERROR_CODES,
  TWO_FACTOR_ERRORS,
  twoFactorCodeSchema,
} from "./accounts.ts";
import { errorCatalogue } from "./errors.ts";

describe("account texts (spec 1 §8)", () => {
  it("gives each two-factor error code its number and the spec's text", () => {
    for (const [code, number] of Object.entries(TWO_FACTOR_ERROR_CODES)) {
      expect(errorCatalogue[code as keyof typeof TWO_FACTOR_ERROR_CODES].text).toBe(TWO_FACTOR_ERRORS[number]);
      expect(errorCatalogue[code as keyof typeof TWO_FACTOR_ERROR_CODES].status).toBe(400);
    }
  });

  it("ends the account deletion error with the support advice", () => {
    expect(errorCatalogue.account_deletion_blocked.text.endsWith(` ${CONTACT_SUPPORT}`)).toBe(true);
  });

  it("uses the spec's verification text", () => {
    expect(errorCatalogue.email_verification_invalid.text).toBe("email verification link invalid or expired");
  });
});

describe("account schemas", () => {
  it("takes 6-digit two-factor codes only", () => {
    expect(twoFactorCodeSchema.safeParse("123456").success).toBe(true);
    expect(twoFactorCodeSchema.safeParse("12345").success).toBe(false);
    expect(twoFactorCodeSchema.safeParse("1234567").success).toBe(false);
    expect(twoFactorCodeSchema.safeParse("12345a").success).toBe(false);
  });

  it("bounds new passwords to 8–64 characters on reset and change", () => {
    expect(passwordResetSchema.safeParse({ code: "c", password: "x".repeat(8) }).success).toBe(true);
    expect(passwordResetSchema.safeParse({ code: "c", password: "x".repeat(65) }).success).toBe(false);
    expect(changePasswordSchema.safeParse({ currentPassword: "a", password: "x".repeat(7) }).success).toBe(false);
  });

  it("requires every profile field", () => {
    const full = { first_name: "A", last_name: "B", company: "C", account_type: "personal" };
    expect(profileSchema.safeParse(full).success).toBe(true);
    for (const field of Object.keys(full)) {
      expect(profileSchema.safeParse({ ...full, [field]: "" }).success, field).toBe(false);
    }
  });

  it("imports keys from http(s) URLs only", () => {
    expect(sshKeyImportSchema.safeParse({ url: "https://github.com/ada.keys" }).success).toBe(true);
    expect(sshKeyImportSchema.safeParse({ url: "file:///etc/passwd" }).success).toBe(false);
  });
});
