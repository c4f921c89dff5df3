import { useSyncExternalStore } from "react";
import { errorText, isUnreportedError } from "./errors.ts";
import { t } from "./i18n.ts";

/**
 * Toasts: short messages at the bottom of the page. Errors are shown as danger toasts with their
 * catalogue text (spec 1 §8), except the "not reported" ones the page handles itself.
 */
export type ToastSeverity = "error" | "warning" | "info" | "success";

export interface Toast {
  id: number;
  severity: ToastSeverity;
  message: string;
}

let toasts: readonly Toast[] = [];
let nextId = 1;
const listeners = new Set<() => void>();
const emit = () => {
  for (const listener of listeners) listener();
};

export function showToast(severity: ToastSeverity, message: string): number {
  const id = nextId++;
  // At most 3 on screen: the oldest goes first.
  toasts = [...toasts, { id, severity, message }].slice(-3);
  emit();
  return id;
}

export function dismissToast(id: number) {
  toasts = toasts.filter((toast) => toast.id !== id);
  emit();
}

/** Shows an error as a danger toast unless it is one of the errors the spec does not report. */
export function reportError(error: unknown): boolean {
  if (isUnreportedError(error)) return false;
  showToast("error", errorText(error));
  return true;
}

/** A lookup found nothing (spec 2 §8): "Resource not found", then the caller navigates back. */
export function reportResourceNotFound() {
  showToast("error", t("errors.resource_not_found"));
}

export const getToasts = () => toasts;

export function subscribeToasts(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useToasts(): readonly Toast[] {
  return useSyncExternalStore(subscribeToasts, getToasts, getToasts);
}
