import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";

/** Confirmation dialogs list at most 10 items (spec 1 §9). */
export const CONFIRM_MAX_ITEMS = 10;

/** The items a confirmation shows: the first 10, and how many more there are. */
export function visibleItems<T>(items: readonly T[], max = CONFIRM_MAX_ITEMS): { shown: T[]; more: number } {
  return { shown: items.slice(0, max), more: Math.max(0, items.length - max) };
}

/**
 * A confirmation dialog (spec 1 §9): a title, a text, up to 10 of the affected items, and, for
 * destructive actions, an input that must hold exactly `confirmText` before the danger button
 * works. Pasting into it is blocked, so the text is typed.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  text?: ReactNode;
  items?: readonly string[];
  confirmLabel: string;
  confirmText?: string;
  danger?: boolean;
  busy?: boolean;
  error?: string;
  children?: ReactNode;
  confirmDisabled?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const [typed, setTyped] = useState("");
  const [pasteBlocked, setPasteBlocked] = useState(false);
  const { shown, more } = visibleItems(props.items ?? []);
  const typedOk = props.confirmText === undefined || typed === props.confirmText;
  const close = () => {
    setTyped("");
    setPasteBlocked(false);
    props.onClose();
  };
  return (
    <Dialog open={props.open} onClose={close} maxWidth="xs" fullWidth>
      <Box
        component="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (typedOk && !props.confirmDisabled) props.onConfirm();
        }}
      >
        <DialogTitle>{props.title}</DialogTitle>
        <DialogContent>
          {props.text ? <DialogContentText sx={{ mb: 2 }}>{props.text}</DialogContentText> : null}
          {shown.length > 0 ? (
            <Box component="ul" sx={{ m: 0, mb: 2, pl: 2.5 }}>
              {shown.map((item) => (
                <Typography component="li" variant="body2" key={item} sx={{ fontWeight: 500 }}>
                  {item}
                </Typography>
              ))}
              {more > 0 ? (
                <Typography component="li" variant="body2" color="text.secondary" sx={{ listStyle: "none" }}>
                  {t("confirm.more", { count: more })}
                </Typography>
              ) : null}
            </Box>
          ) : null}
          {props.error ? (
            <Alert severity="error" sx={{ mb: 2 }}>
              {props.error}
            </Alert>
          ) : null}
          {props.children}
          {props.confirmText !== undefined ? (
            <TextField
              fullWidth
              autoFocus
              autoComplete="off"
              label={t("confirm.type_to_confirm", { text: props.confirmText })}
              value={typed}
              onChange={(event) => setTyped(event.target.value)}
              onPaste={(event) => {
                event.preventDefault();
                setPasteBlocked(true);
              }}
              helperText={pasteBlocked ? t("confirm.paste_blocked") : undefined}
            />
          ) : null}
        </DialogContent>
        <DialogActions>
          <Button onClick={close}>{t("confirm.cancel")}</Button>
          <Button
            type="submit"
            variant="contained"
            color={props.danger ? "error" : "primary"}
            disabled={!typedOk || props.confirmDisabled}
            loading={props.busy}
          >
            {props.confirmLabel}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
