import { DATE_FORMAT, isSshPublicKey } from "@flotilla/domain";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import KeyOutlined from "@mui/icons-material/KeyOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import DialogContentText from "@mui/material/DialogContentText";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { format } from "date-fns";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { AccessList, ConfirmRemoveDialog } from "../../components/access-list.tsx";
import { FormDialog } from "../../components/form-dialog.tsx";
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
  const submit = () => {
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
    <FormDialog
      open={open}
      maxWidth="sm"
      onClose={onClose}
      title={t("preferences.sshkeys.add")}
      error={add.isError ? errorText(add.error) : undefined}
      cancelLabel={t("preferences.sshkeys.cancel")}
      submitLabel={t("preferences.sshkeys.save")}
      busy={add.isPending}
      onSubmit={submit}
    >
      <Stack spacing={2} sx={{ pt: 1 }}>
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
    </FormDialog>
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
    <FormDialog
      open={open}
      maxWidth="sm"
      onClose={onClose}
      title={t("preferences.sshkeys.import_title")}
      error={importKeys.isError ? `${t("errors.failed_to_save_ssh_keys")} ${errorText(importKeys.error)}` : undefined}
      cancelLabel={t("preferences.sshkeys.cancel")}
      submitLabel={t("preferences.sshkeys.import")}
      busy={importKeys.isPending}
      submitDisabled={!url.trim()}
      onSubmit={() => {
        if (url.trim()) importKeys.mutate();
      }}
    >
      <DialogContentText sx={{ mb: 2 }}>{t("preferences.sshkeys.import_text")}</DialogContentText>
      <TextField
        label={t("preferences.sshkeys.import_url")}
        type="url"
        autoFocus
        fullWidth
        value={url}
        onChange={(event) => setUrl(event.target.value)}
      />
    </FormDialog>
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
      {keys.data ? (
        <AccessList
          label={t("preferences.sshkeys.title")}
          rows={keys.data}
          hover
          empty={
            <EmptyState
              icon={<KeyOutlined />}
              title={t("preferences.sshkeys.empty_title")}
              text={t("preferences.sshkeys.empty_text")}
            />
          }
          columns={[
            { header: t("preferences.sshkeys.key_title"), cell: (key) => key.title, sx: { fontWeight: 500 } },
            { header: t("preferences.sshkeys.fingerprint"), cell: (key) => <Fingerprint publicKey={key.public_key} /> },
            {
              header: t("preferences.sshkeys.created"),
              cell: (key) => format(new Date(key.created_at), DATE_FORMAT),
              sx: { whiteSpace: "nowrap" },
            },
          ]}
          actions={[
            {
              icon: <DeleteOutlined fontSize="small" />,
              label: (key) => `${t("preferences.sshkeys.remove")} ${key.title}`,
              tooltip: () => t("preferences.sshkeys.remove"),
              onClick: setRemoving,
            },
          ]}
        />
      ) : null}
      <AddKeyDialog open={adding} onClose={() => setAdding(false)} />
      <ImportDialog open={importing} onClose={() => setImporting(false)} />
      <ConfirmRemoveDialog
        target={removing}
        name={(key) => key.title}
        title={t("preferences.sshkeys.remove_title")}
        text={t("preferences.sshkeys.remove_text")}
        confirmLabel={t("preferences.sshkeys.remove")}
        busy={remove.isPending}
        onConfirm={(key) => remove.mutate(key.id)}
        onClose={() => setRemoving(undefined)}
      />
    </Section>
  );
}
