import { DATE_FORMAT } from "@flotilla/domain";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import EditOutlined from "@mui/icons-material/EditOutlined";
import VpnKeyOutlined from "@mui/icons-material/VpnKeyOutlined";
import Alert from "@mui/material/Alert";
import Button from "@mui/material/Button";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { format } from "date-fns";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { AccessList, ConfirmRemoveDialog } from "../../components/access-list.tsx";
import { FormDialog } from "../../components/form-dialog.tsx";
import { EmptyState } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { useReauth } from "../auth/reauth.tsx";
import { organizationCan } from "../orgs/access.ts";
import { useMyRolesByOrganization } from "../orgs/data.ts";
import { NewKeyDialog } from "./new-key-dialog.tsx";
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
  const api = useAccountApi();
  const withReauth = useReauth();
  return (
    <NewKeyDialog
      open={open}
      title={t("preferences.tokens.create")}
      createdTitle={t("preferences.tokens.created_title")}
      neverWarning
      create={(key) => withReauth(() => api.createApiKey(key))}
      onCreated={() => queryClient.invalidateQueries({ queryKey: keysQueryKey })}
      onClose={onClose}
    />
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
    <FormDialog
      open={apiKey !== undefined}
      maxWidth="sm"
      onClose={onClose}
      title={t("preferences.tokens.edit_title")}
      error={update.isError ? errorText(update.error) : undefined}
      cancelLabel={t("preferences.tokens.cancel")}
      submitLabel={t("preferences.tokens.save")}
      busy={update.isPending}
      onSubmit={() => {
        if (name.trim()) update.mutate();
      }}
    >
      <Stack spacing={2} sx={{ pt: 1 }}>
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
    </FormDialog>
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
      {keys.data ? (
        <AccessList
          label={t("preferences.tokens.title")}
          rows={keys.data}
          hover
          empty={
            <EmptyState
              icon={<VpnKeyOutlined />}
              title={t("preferences.tokens.empty_title")}
              text={t("preferences.tokens.empty_text")}
            />
          }
          columns={[
            { header: t("preferences.tokens.name"), cell: (key) => key.name, sx: { fontWeight: 500 } },
            {
              header: t("preferences.tokens.description"),
              cell: (key) => key.description,
              sx: { color: "text.secondary" },
            },
            {
              header: t("preferences.tokens.expiry"),
              cell: (key) => (key.expiry_date ? formatDate(key.expiry_date) : t("preferences.tokens.never")),
              sx: { whiteSpace: "nowrap" },
            },
            {
              header: t("preferences.tokens.created"),
              cell: (key) => formatDate(key.created_at),
              sx: { whiteSpace: "nowrap" },
            },
          ]}
          actions={[
            {
              icon: <EditOutlined fontSize="small" />,
              label: (key) => `${t("preferences.tokens.edit")} ${key.name ?? ""}`,
              tooltip: () => t("preferences.tokens.edit"),
              onClick: setEditing,
            },
            {
              icon: <DeleteOutlined fontSize="small" />,
              label: (key) => `${t("preferences.tokens.revoke")} ${key.name ?? ""}`,
              tooltip: () => t("preferences.tokens.revoke"),
              onClick: setRevoking,
            },
          ]}
        />
      ) : null}
      <CreateDialog open={creating} onClose={() => setCreating(false)} />
      {editing ? <EditDialog key={editing.id} apiKey={editing} onClose={() => setEditing(undefined)} /> : null}
      <ConfirmRemoveDialog
        target={revoking}
        name={(key) => key.name}
        title={t("preferences.tokens.revoke_title")}
        text={t("preferences.tokens.revoke_text")}
        confirmLabel={t("preferences.tokens.revoke")}
        busy={revoke.isPending}
        onConfirm={(key) => revoke.mutate(key.id)}
        onClose={() => setRevoking(undefined)}
      />
    </Section>
  );
}
