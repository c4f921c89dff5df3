import { lazy, Suspense } from "react";
import { withChunkTimeout } from "../lib/chunk.ts";
import { useToasts } from "../lib/toasts.ts";

const ToastStack = lazy(() =>
  withChunkTimeout(import("./toast-stack.tsx")).then((module) => ({ default: module.ToastStack })),
);

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
