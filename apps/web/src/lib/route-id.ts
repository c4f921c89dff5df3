import { redirect } from "@tanstack/react-router";
import { t } from "./i18n.ts";
import { showToast } from "./toasts.ts";

/** The path one level up: `/orgs/abc/members` → `/orgs/abc`, `/orgs/abc` → `/orgs`. */
export function upOneLevel(pathname: string): string {
  const parts = pathname.replace(/\/+$/, "").split("/").filter(Boolean);
  parts.pop();
  return `/${parts.join("/")}`;
}

/** Whether a URL segment is a numeric id (digits only, no sign, no leading zero, safe integer). */
export const isNumericId = (value: string) => /^[1-9]\d*$/.test(value) && Number.isSafeInteger(Number(value));

/**
 * For a route's `beforeLoad`: a non-numeric id shows "invalid id passed in url" and goes up one
 * level (spec 1 §2.2); a numeric one is returned as a number.
 */
export function requireNumericId(value: string, pathname: string): number {
  if (isNumericId(value)) return Number(value);
  showToast("error", t("errors.invalid_id_passed_in_url"));
  throw redirect({ href: upOneLevel(pathname), replace: true });
}
