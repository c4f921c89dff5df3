import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { DialogForm } from "../../components/form-dialog.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { type ExpiryChoice, expiryDateFor } from "./api-key-expiry.ts";
import { ExpiryFields } from "./expiry-fields.tsx";

/** What a new key is made of (spec 1 §5): a name, an optional description, an expiry (null: never). */
export interface NewKey {
  name: string;
  description: string | null;
  expiryDate: string | null;
}

/**
 * Create an API key (the user's access token, a fleet's provisioning key): name, description and
 * expiry, then the key itself, shown once with a copy button; it cannot be read again.
 */
export function NewKeyDialog(props: {
  open?: boolean;
  /** The dialog's title and its submit button. */
  title: string;
  createdTitle: string;
  /** "Never" expiring keys are warned about. */
  neverWarning?: boolean;
  create: (key: NewKey) => Promise<string>;
  onCreated: () => Promise<unknown>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [choice, setChoice] = useState<ExpiryChoice>("30");
  const [custom, setCustom] = useState("");
  const [errors, setErrors] = useState<{ name?: string; expiry?: string }>({});
  const [created, setCreated] = useState<string>();
  const create = useMutation({
    mutationFn: (expiryDate: string | null) =>
      props.create({ name: name.trim(), description: description.trim() || null, expiryDate }),
    meta: { reportErrors: false },
    onSuccess: async (key) => {
      setCreated(key);
      await props.onCreated();
    },
  });
  const close = () => {
    setName("");
    setDescription("");
    setChoice("30");
    setCustom("");
    setErrors({});
    setCreated(undefined);
    create.reset();
    props.onClose();
  };
  const submit = () => {
    const expiry = expiryDateFor(choice, custom);
    const found = {
      name: name.trim() ? undefined : t("preferences.tokens.name_required"),
      expiry: expiry.ok ? undefined : t(`preferences.tokens.${expiry.error}`),
    };
    setErrors(found);
    if (!found.name && expiry.ok) create.mutate(expiry.expiryDate);
  };
  return (
    // Once the key is shown, only Done closes the dialog: a stray click must not lose it.
    <Dialog open={props.open ?? true} onClose={created ? undefined : close} maxWidth="sm" fullWidth>
      {created ? (
        <CreatedKey title={props.createdTitle} value={created} onDone={close} />
      ) : (
        <DialogForm
          title={props.title}
          error={create.isError ? errorText(create.error) : undefined}
          cancelLabel={t("preferences.tokens.cancel")}
          submitLabel={props.title}
          busy={create.isPending}
          onSubmit={submit}
          onCancel={close}
        >
          <Stack spacing={2} sx={{ pt: 1 }}>
            <TextField
              label={t("preferences.tokens.name")}
              name="name"
              autoFocus
              fullWidth
              value={name}
              onChange={(event) => setName(event.target.value)}
              error={Boolean(errors.name)}
              helperText={errors.name}
            />
            <TextField
              label={t("preferences.tokens.description")}
              name="description"
              fullWidth
              value={description}
              onChange={(event) => setDescription(event.target.value)}
            />
            <ExpiryFields
              choice={choice}
              custom={custom}
              error={errors.expiry}
              onChoice={setChoice}
              onCustom={setCustom}
            />
            {props.neverWarning && choice === "never" ? (
              <Alert severity="warning">{t("preferences.tokens.never_warning")}</Alert>
            ) : null}
          </Stack>
        </DialogForm>
      )}
    </Dialog>
  );
}

/** The new key, once: a warning that it is not shown again, the key, Copy and Done. */
function CreatedKey(props: { title: string; value: string; onDone: () => void }) {
  const { t } = useTranslation();
  // Clipboard refused (or absent): the key stays selectable on screen.
  const copy = () =>
    void navigator.clipboard?.writeText(props.value).then(
      () => showToast("success", t("preferences.tokens.copied")),
      () => undefined,
    );
  return (
    <>
      <DialogTitle>{props.title}</DialogTitle>
      <DialogContent>
        <Alert severity="warning" sx={{ mb: 2 }}>
          {t("preferences.tokens.created_text")}
        </Alert>
        <Box
          sx={{
            display: "flex",
            alignItems: "center",
            gap: 1,
            border: 1,
            borderColor: "divider",
            borderRadius: 1,
            pl: 1.5,
            pr: 0.5,
            py: 0.5,
            bgcolor: "action.hover",
          }}
        >
          <Typography
            aria-label={props.title}
            data-testid="created-key"
            sx={{ flex: 1, fontFamily: MONO_FONT_STACK, fontSize: "0.8125rem", wordBreak: "break-all" }}
          >
            {props.value}
          </Typography>
          <Button size="small" startIcon={<ContentCopyOutlined fontSize="small" />} onClick={copy}>
            {t("preferences.tokens.copy")}
          </Button>
        </Box>
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={props.onDone}>
          {t("preferences.tokens.done")}
        </Button>
      </DialogActions>
    </>
  );
}
