import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import CircularProgress from "@mui/material/CircularProgress";
import Typography from "@mui/material/Typography";
import type { UseQueryResult } from "@tanstack/react-query";
import { format } from "date-fns";
import { type ReactNode, useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { showToast } from "../../lib/toasts.ts";

/** The pieces the billing and credits pages share. */

const DAY_FORMAT = "MMM d, yyyy";

export const day = (value: string | null | undefined) => (value ? format(new Date(value), DAY_FORMAT) : "–");
export const numeric = { fontVariantNumeric: "tabular-nums", whiteSpace: "nowrap" } as const;
/** A dialog's buttons lined up with its content's edges (24 px), not MUI's 8 px. */
export const dialogActionsSx = { px: 3, pb: 2.5, pt: 1 } as const;

/** A failed load of one part of the page shows its own error toast once (spec 3 §8). */
export function useFailureToast(query: UseQueryResult<unknown>, text: string) {
  const shown = useRef(false);
  useEffect(() => {
    if (query.isError && !shown.current) {
      shown.current = true;
      showToast("error", text);
    }
    if (query.isSuccess) shown.current = false;
  }, [query.isError, query.isSuccess, text]);
}

export function Loading() {
  return (
    <Box sx={{ display: "grid", placeItems: "center", py: 3 }}>
      <CircularProgress size={22} />
    </Box>
  );
}

export function Failed({ text, onRetry }: { text: string; onRetry: () => void }) {
  const { t } = useTranslation();
  return (
    <Alert
      severity="error"
      variant="outlined"
      action={
        <Button color="inherit" size="small" onClick={onRetry}>
          {t("error_page.refresh")}
        </Button>
      }
    >
      {text}
    </Alert>
  );
}

/** A label and its value, one row of a card's facts. */
export function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Box sx={{ display: "flex", gap: 2, py: 0.5 }}>
      <Typography variant="body2" color="text.secondary" sx={{ width: 120, flexShrink: 0 }}>
        {label}
      </Typography>
      <Box sx={{ minWidth: 0, flex: 1, typography: "body2" }}>{children}</Box>
    </Box>
  );
}
