import { DATE_FORMAT } from "@flotilla/domain";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import EditOutlined from "@mui/icons-material/EditOutlined";
import VpnKeyOutlined from "@mui/icons-material/VpnKeyOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
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
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { EmptyState } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { useReauth } from "../auth/reauth.tsx";
import { organizationCan } from "../orgs/access.ts";
import { useMyRolesByOrganization } from "../orgs/data.ts";
import { type ExpiryChoice, expiryDateFor } from "./api-key-expiry.ts";
import { ExpiryFields } from "./expiry-fields.tsx";
import { Section } from "./section.tsx";
import { useSessionUser } from "./use-user.ts";

/** The API key list is refetched every 6 s (spec 1 §9). */
export const API_KEY_REFETCH_MS = 6000;

interface ApiKey {
  id: number;
  name: string | null;
  description: string | null;
  expiry_date: string | null;
  created_at: string;
}

const keysQueryKey = ["api-keys"] as const;
const formatDate = (value: string | null | undefined) => (value ? format(new Date(value), DATE_FORMAT) : "");

function CreateDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [choice, setChoice] = useState<ExpiryChoice>("30");
  const [custom, setCustom] = useState("");
  const [errors, setErrors] = useState<{ name?: string; expiry?: string }>({});
  const [created, setCreated] = useState<string>();
  const api = useAccountApi();
  const withReauth = useReauth();
  const create = useMutation({
    mutationFn: (expiryDate: string | null) =>
      withReauth(() => api.createApiKey({ name: name.trim(), description: description.trim() || null, expiryDate })),
    meta: { reportErrors: false },
    onSuccess: async (key) => {
      setCreated(key);
      await queryClient.invalidateQueries({ queryKey: keysQueryKey });
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
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const expiry = expiryDateFor(choice, custom);
    const found = {
      name: name.trim() ? undefined : t("preferences.tokens.name_required"),
      expiry: expiry.ok ? undefined : t(`preferences.tokens.${expiry.error}`),
    };
    setErrors(found);
    if (!found.name && expiry.ok) create.mutate(expiry.expiryDate);
  };
  const copy = async () => {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created);
      showToast("success", t("preferences.tokens.copied"));
    } catch {
      // Clipboard refused: the key stays selectable on screen.
    }
  };
  return (
    <Dialog open={open} onClose={created ? undefined : close} maxWidth="sm" fullWidth>
      {created ? (
        <>
          <DialogTitle>{t("preferences.tokens.created_title")}</DialogTitle>
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
                aria-label={t("preferences.tokens.created_title")}
                sx={{ flex: 1, fontFamily: MONO_FONT_STACK, fontSize: "0.8125rem", wordBreak: "break-all" }}
              >
                {created}
              </Typography>
              <Button size="small" startIcon={<ContentCopyOutlined fontSize="small" />} onClick={() => void copy()}>
                {t("preferences.tokens.copy")}
              </Button>
            </Box>
          </DialogContent>
          <DialogActions>
            <Button variant="contained" onClick={close}>
              {t("preferences.tokens.done")}
            </Button>
          </DialogActions>
        </>
      ) : (
        <form noValidate onSubmit={submit}>
          <DialogTitle>{t("preferences.tokens.create")}</DialogTitle>
          <DialogContent>
            <Stack spacing={2} sx={{ pt: 1 }}>
              {create.isError ? <Alert severity="error">{errorText(create.error)}</Alert> : null}
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
              {choice === "never" ? <Alert severity="warning">{t("preferences.tokens.never_warning")}</Alert> : null}
            </Stack>
          </DialogContent>
          <DialogActions>
            <Button onClick={close}>{t("preferences.tokens.cancel")}</Button>
            <Button type="submit" variant="contained" loading={create.isPending}>
              {t("preferences.tokens.create")}
            </Button>
          </DialogActions>
        </form>
      )}
    </Dialog>
  );
}

function EditDialog({ apiKey, onClose }: { apiKey: ApiKey | undefined; onClose: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const [name, setName] = useState(apiKey?.name ?? "");
  const [description, setDescription] = useState(apiKey?.description ?? "");
  const update = useMutation({
    mutationFn: () =>
      sdk.models.apiKey.update(apiKey?.id ?? 0, { name: name.trim(), description: description.trim() || null }),
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("preferences.tokens.updated"));
      onClose();
      await queryClient.invalidateQueries({ queryKey: keysQueryKey });
    },
  });
  return (
    <Dialog open={apiKey !== undefined} onClose={onClose} maxWidth="sm" fullWidth>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (name.trim()) update.mutate();
        }}
      >
        <DialogTitle>{t("preferences.tokens.edit_title")}</DialogTitle>
        <DialogContent>
          <Stack spacing={2} sx={{ pt: 1 }}>
            {update.isError ? <Alert severity="error">{errorText(update.error)}</Alert> : null}
            <TextField
              label={t("preferences.tokens.name")}
              autoFocus
              fullWidth
              value={name}
              onChange={(event) => setName(event.target.value)}
              error={!name.trim()}
              helperText={name.trim() ? undefined : t("preferences.tokens.name_required")}
            />
            <TextField
              label={t("preferences.tokens.description")}
              fullWidth
              value={description}
              onChange={(event) => setDescription(event.target.value)}
            />
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t("preferences.tokens.cancel")}</Button>
          <Button type="submit" variant="contained" loading={update.isPending}>
            {t("preferences.tokens.save")}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

/** `/preferences/access-tokens` (spec 1 §2.4, §5, §6.1). */
export function AccessTokensPreferencesPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const user = useSessionUser();
  const queryClient = useQueryClient();
  const keys = useQuery({
    queryKey: keysQueryKey,
    queryFn: async () =>
      (await sdk.models.apiKey.getAllNamedUserApiKeys({
        $select: ["id", "name", "description", "expiry_date", "created_at"],
      })) as unknown as ApiKey[],
    refetchInterval: API_KEY_REFETCH_MS,
    refetchIntervalInBackground: false,
  });
  // Accounts that sign in only through SAML cannot create API keys (spec 1 §6.1).
  const saml = useQuery({
    queryKey: ["saml-accounts", user?.id],
    enabled: user !== undefined,
    queryFn: async () =>
      (
        await sdk.pine.get({
          resource: "saml_account",
          options: { $select: ["id"], $filter: { belongs_to__user: user?.id ?? 0 } },
        })
      ).length > 0,
    meta: { handlesErrors: true },
    retry: false,
  });
  const samlOnly = saml.data === true && user?.has_password_set === false;
  // User API keys need the administrator role in an organization (spec 1 §6.1), as the server checks.
  const roles = useMyRolesByOrganization();
  const notAdministrator =
    roles.isSuccess && ![...roles.data.values()].some((role) => organizationCan(role, "user_api_key", "create"));
  const createRefusal = samlOnly
    ? t("preferences.tokens.saml_blocked")
    : notAdministrator
      ? t("preferences.tokens.admin_only")
      : undefined;
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<ApiKey>();
  const [revoking, setRevoking] = useState<ApiKey>();
  const revoke = useMutation({
    mutationFn: (id: number) => sdk.models.apiKey.revoke(id),
    onSuccess: async () => {
      showToast("success", t("preferences.tokens.revoked"));
      setRevoking(undefined);
      await queryClient.invalidateQueries({ queryKey: keysQueryKey });
    },
  });
  return (
    <Section
      title={t("preferences.tokens.title")}
      text={t("preferences.tokens.text")}
      actions={
        <Tooltip title={createRefusal ?? ""}>
          <span>
            <Button variant="contained" disabled={createRefusal !== undefined} onClick={() => setCreating(true)}>
              {t("preferences.tokens.create")}
            </Button>
          </span>
        </Tooltip>
      }
    >
      {createRefusal ? (
        <Alert severity="info" sx={{ mb: 2 }}>
          {createRefusal}
        </Alert>
      ) : null}
      {keys.data && keys.data.length === 0 ? (
        <EmptyState
          icon={<VpnKeyOutlined />}
          title={t("preferences.tokens.empty_title")}
          text={t("preferences.tokens.empty_text")}
        />
      ) : null}
      {keys.data && keys.data.length > 0 ? (
        <Table size="small" aria-label={t("preferences.tokens.title")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("preferences.tokens.name")}</TableCell>
              <TableCell>{t("preferences.tokens.description")}</TableCell>
              <TableCell>{t("preferences.tokens.expiry")}</TableCell>
              <TableCell>{t("preferences.tokens.created")}</TableCell>
              <TableCell align="right" />
            </TableRow>
          </TableHead>
          <TableBody>
            {keys.data.map((key) => (
              <TableRow key={key.id} hover>
                <TableCell sx={{ fontWeight: 500 }}>{key.name}</TableCell>
                <TableCell sx={{ color: "text.secondary" }}>{key.description}</TableCell>
                <TableCell sx={{ whiteSpace: "nowrap" }}>
                  {key.expiry_date ? formatDate(key.expiry_date) : t("preferences.tokens.never")}
                </TableCell>
                <TableCell sx={{ whiteSpace: "nowrap" }}>{formatDate(key.created_at)}</TableCell>
                <TableCell align="right" sx={{ whiteSpace: "nowrap" }}>
                  <Tooltip title={t("preferences.tokens.edit")}>
                    <IconButton
                      size="small"
                      aria-label={`${t("preferences.tokens.edit")} ${key.name ?? ""}`}
                      onClick={() => setEditing(key)}
                    >
                      <EditOutlined fontSize="small" />
                    </IconButton>
                  </Tooltip>
                  <Tooltip title={t("preferences.tokens.revoke")}>
                    <IconButton
                      size="small"
                      aria-label={`${t("preferences.tokens.revoke")} ${key.name ?? ""}`}
                      onClick={() => setRevoking(key)}
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
      <CreateDialog open={creating} onClose={() => setCreating(false)} />
      {editing ? <EditDialog key={editing.id} apiKey={editing} onClose={() => setEditing(undefined)} /> : null}
      <ConfirmDialog
        open={revoking !== undefined}
        danger
        title={t("preferences.tokens.revoke_title")}
        text={t("preferences.tokens.revoke_text")}
        items={revoking?.name ? [revoking.name] : []}
        confirmLabel={t("preferences.tokens.revoke")}
        busy={revoke.isPending}
        onConfirm={() => revoking && revoke.mutate(revoking.id)}
        onClose={() => setRevoking(undefined)}
      />
    </Section>
  );
}
