import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import type { FormEvent, ReactNode } from "react";
import { useTranslation } from "react-i18next";

/** What a dialog's form needs: its title, fields, the server's refusal and its two buttons. */
export interface DialogFormProps {
  title: ReactNode;
  /** The refusal of the last submit, shown above the fields; the user's input stays. */
  error?: ReactNode;
  submitLabel: string;
  /** "Cancel" unless a page names it otherwise. */
  cancelLabel?: string;
  busy?: boolean;
  submitDisabled?: boolean;
  /** Called on submit (Enter or the submit button), without the browser's own submit. */
  onSubmit: () => unknown;
  onCancel: () => void;
  children: ReactNode;
}

/**
 * The form inside an add/edit dialog: title, the refusal as an error, the fields, Cancel and the
 * submit button. The browser's own validation is off: the fields say what is missing themselves.
 */
export function DialogForm(props: DialogFormProps) {
  const { t } = useTranslation();
  return (
    <Box
      component="form"
      noValidate
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        void props.onSubmit();
      }}
    >
      <DialogTitle>{props.title}</DialogTitle>
      <DialogContent>
        {props.error ? (
          <Alert severity="error" sx={{ mb: 2 }}>
            {props.error}
          </Alert>
        ) : null}
        {props.children}
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onCancel}>{props.cancelLabel ?? t("confirm.cancel")}</Button>
        <Button
          type="submit"
          variant="contained"
          loading={props.busy ?? false}
          disabled={props.submitDisabled ?? false}
        >
          {props.submitLabel}
        </Button>
      </DialogActions>
    </Box>
  );
}

/** An add/edit dialog (spec 1 §9): a form whose refusal by the server shows in the dialog. */
export function FormDialog({
  open = true,
  maxWidth = "xs",
  onClose,
  ...form
}: Omit<DialogFormProps, "onCancel"> & {
  open?: boolean;
  maxWidth?: "xs" | "sm";
  onClose: () => void;
}) {
  return (
    <Dialog open={open} onClose={onClose} maxWidth={maxWidth} fullWidth>
      <DialogForm {...form} onCancel={onClose} />
    </Dialog>
  );
}
