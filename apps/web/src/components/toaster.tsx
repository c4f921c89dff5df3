import { Suspense } from "react";
import { lazyComponent } from "../lib/lazy-component.ts";
import { useToasts } from "../lib/toasts.ts";

const ToastStack = lazyComponent(() => import("./toast-stack.tsx"), "ToastStack");

/**
 * Renders the toast queue at the bottom of the page. MUI's Snackbar is loaded with the first
 * toast, not with the page (issue 17, first visit speed).
 */
export function Toaster() {
  const toasts = useToasts();
  if (toasts.length === 0) return null;
  return (
    <Suspense fallback={null}>
      <ToastStack />
    </Suspense>
  );
}
