import Alert from "@mui/material/Alert";
import Snackbar from "@mui/material/Snackbar";
import Stack from "@mui/material/Stack";
import { dismissToast, useToasts } from "../lib/toasts.ts";

const AUTO_HIDE_MS = 6000;

/** The toast queue at the bottom of the page (loaded with the first toast: see toaster.tsx). */
export function ToastStack() {
  const toasts = useToasts();
  return (
    <Stack
      spacing={1}
      sx={{ position: "absolute", bottom: 16, left: "50%", transform: "translateX(-50%)", zIndex: 1400 }}
    >
      {toasts.map((toast) => (
        <Snackbar
          key={toast.id}
          open
          autoHideDuration={AUTO_HIDE_MS}
          onClose={(_event, reason) => {
            if (reason !== "clickaway") dismissToast(toast.id);
          }}
          sx={{ position: "static", transform: "none" }}
        >
          <Alert
            severity={toast.severity}
            variant="filled"
            onClose={() => dismissToast(toast.id)}
            sx={{ minWidth: 320, maxWidth: 560 }}
          >
            {toast.message}
          </Alert>
        </Snackbar>
      ))}
    </Stack>
  );
}
