import { DATE_FORMAT, isSshPublicKey } from "@flotilla/domain";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import KeyOutlined from "@mui/icons-material/KeyOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import IconButton from "@mui/material/IconButton";
import Stack from "@mui/material/Stack";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { format } from "date-fns";
import { type FormEvent, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { EmptyState } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { useReauth } from "../auth/reauth.tsx";
import { sshFingerprint } from "./fingerprint.ts";
import { Section } from "./section.tsx";

interface SshKey {
  id: number;
  title: string;
  public_key: string;
  created_at: string;
}

const keysQueryKey = ["ssh-keys"] as const;

function Fingerprint({ publicKey }: { publicKey: string }) {
  const [value, setValue] = useState<string>();
  useEffect(() => {
    let live = true;
    void sshFingerprint(publicKey).then((fingerprint) => {
      if (live) setValue(fingerprint);
    });
    return () => {
      live = false;
    };
  }, [publicKey]);
  return (
    <Typography component="span" sx={{ fontFamily: MONO_FONT_STACK, fontSize: "0.8125rem", wordBreak: "break-all" }}>
      {value ?? "…"}
    </Typography>
  );
}

function AddKeyDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const [title, setTitle] = useState("");
  const [key, setKey] = useState("");
  const [errors, setErrors] = useState<{ title?: string; key?: string }>({});
  // Adding a key is a sensitive action: a login older than 20 minutes asks for the password first.
  const withReauth = useReauth();
  const add = useMutation({
    mutationFn: () => withReauth(() => sdk.models.key.create(title.trim(), key.trim())),
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("preferences.sshkeys.added"));
      setTitle("");
      setKey("");
      onClose();
      await queryClient.invalidateQueries({ queryKey: keysQueryKey });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = {
      title: title.trim() ? undefined : t("preferences.sshkeys.title_required"),
      key: !key.trim()
        ? t("preferences.sshkeys.key_required")
        : isSshPublicKey(key)
          ? undefined
          : t("preferences.sshkeys.key_invalid"),
    };
    setErrors(found);
    if (!found.title && !found.key) add.mutate();
  };
  return (
    <Dialog open={open} onClose={onClose} maxWidth="sm" fullWidth>
      <form noValidate onSubmit={submit}>
        <DialogTitle>{t("preferences.sshkeys.add")}</DialogTitle>
        <DialogContent>
          <Stack spacing={2} sx={{ pt: 1 }}>
            {add.isError ? <Alert severity="error">{errorText(add.error)}</Alert> : null}
            <TextField
              label={t("preferences.sshkeys.key_title")}
              name="title"
              autoFocus
              fullWidth
              value={title}
              onChange={(event) => setTitle(event.target.value)}
              error={Boolean(errors.title)}
              helperText={errors.title}
            />
            <TextField
              label={t("preferences.sshkeys.key")}
              name="public_key"
              fullWidth
              multiline
              minRows={4}
              value={key}
              onChange={(event) => setKey(event.target.value)}
              error={Boolean(errors.key)}
              helperText={errors.key ?? t("preferences.sshkeys.key_help")}
              slotProps={{
                htmlInput: { style: { fontFamily: MONO_FONT_STACK, fontSize: "0.8125rem" }, spellCheck: false },
              }}
            />
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t("preferences.sshkeys.cancel")}</Button>
          <Button type="submit" variant="contained" loading={add.isPending}>
            {t("preferences.sshkeys.save")}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

function ImportDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const api = useAccountApi();
  const queryClient = useQueryClient();
  const withReauth = useReauth();
  const [url, setUrl] = useState("");
  const importKeys = useMutation({
    mutationFn: () => withReauth(() => api.importSshKeys(url.trim())),
    meta: { reportErrors: false },
    onSuccess: async (result) => {
      if (result.added === 0 && result.skipped > 0) showToast("info", t("errors.all_keys_already_saved"));
      else showToast("success", t("preferences.sshkeys.imported", { count: result.added }));
      setUrl("");
      onClose();
      await queryClient.invalidateQueries({ queryKey: keysQueryKey });
    },
    onError: async () => {
      await queryClient.invalidateQueries({ queryKey: keysQueryKey });
    },
  });
  return (
    <Dialog open={open} onClose={onClose} maxWidth="sm" fullWidth>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (url.trim()) importKeys.mutate();
        }}
      >
        <DialogTitle>{t("preferences.sshkeys.import_title")}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>{t("preferences.sshkeys.import_text")}</DialogContentText>
          {importKeys.isError ? (
            <Alert severity="error" sx={{ mb: 2 }}>
              {t("errors.failed_to_save_ssh_keys")} {errorText(importKeys.error)}
            </Alert>
          ) : null}
          <TextField
            label={t("preferences.sshkeys.import_url")}
            type="url"
            autoFocus
            fullWidth
            value={url}
            onChange={(event) => setUrl(event.target.value)}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t("preferences.sshkeys.cancel")}</Button>
          <Button type="submit" variant="contained" loading={importKeys.isPending} disabled={!url.trim()}>
            {t("preferences.sshkeys.import")}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

/** `/preferences/sshkeys` (spec 1 §2.4, §5): list, add, remove, import from a code host. */
export function SshKeysPreferencesPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const keys = useQuery({
    queryKey: keysQueryKey,
    queryFn: async () => (await sdk.models.key.getAll({ $orderby: { created_at: "desc" } })) as unknown as SshKey[],
  });
  const [adding, setAdding] = useState(false);
  const [importing, setImporting] = useState(false);
  const [removing, setRemoving] = useState<SshKey>();
  const remove = useMutation({
    mutationFn: (id: number) => sdk.models.key.remove(id),
    onSuccess: async () => {
      showToast("success", t("preferences.sshkeys.removed"));
      setRemoving(undefined);
      await queryClient.invalidateQueries({ queryKey: keysQueryKey });
    },
  });
  const actions = (
    <Box sx={{ display: "flex", gap: 1 }}>
      <Button variant="outlined" onClick={() => setImporting(true)}>
        {t("preferences.sshkeys.import")}
      </Button>
      <Button variant="contained" onClick={() => setAdding(true)}>
        {t("preferences.sshkeys.add")}
      </Button>
    </Box>
  );
  return (
    <Section title={t("preferences.sshkeys.title")} text={t("preferences.sshkeys.text")} actions={actions}>
      {keys.data && keys.data.length === 0 ? (
        <EmptyState
          icon={<KeyOutlined />}
          title={t("preferences.sshkeys.empty_title")}
          text={t("preferences.sshkeys.empty_text")}
        />
      ) : null}
      {keys.data && keys.data.length > 0 ? (
        <Table size="small" aria-label={t("preferences.sshkeys.title")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("preferences.sshkeys.key_title")}</TableCell>
              <TableCell>{t("preferences.sshkeys.fingerprint")}</TableCell>
              <TableCell>{t("preferences.sshkeys.created")}</TableCell>
              <TableCell align="right" />
            </TableRow>
          </TableHead>
          <TableBody>
            {keys.data.map((key) => (
              <TableRow key={key.id} hover>
                <TableCell sx={{ fontWeight: 500 }}>{key.title}</TableCell>
                <TableCell>
                  <Fingerprint publicKey={key.public_key} />
                </TableCell>
                <TableCell sx={{ whiteSpace: "nowrap" }}>{format(new Date(key.created_at), DATE_FORMAT)}</TableCell>
                <TableCell align="right">
                  <Tooltip title={t("preferences.sshkeys.remove")}>
                    <IconButton
                      size="small"
                      aria-label={`${t("preferences.sshkeys.remove")} ${key.title}`}
                      onClick={() => setRemoving(key)}
                    >
                      <DeleteOutlined fontSize="small" />
                    </IconButton>
                  </Tooltip>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      ) : null}
      <AddKeyDialog open={adding} onClose={() => setAdding(false)} />
      <ImportDialog open={importing} onClose={() => setImporting(false)} />
      <ConfirmDialog
        open={removing !== undefined}
        danger
        title={t("preferences.sshkeys.remove_title")}
        text={t("preferences.sshkeys.remove_text")}
        items={removing ? [removing.title] : []}
        confirmLabel={t("preferences.sshkeys.remove")}
        busy={remove.isPending}
        onConfirm={() => removing && remove.mutate(removing.id)}
        onClose={() => setRemoving(undefined)}
      />
    </Section>
  );
}
