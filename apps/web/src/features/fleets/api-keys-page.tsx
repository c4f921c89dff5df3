import { DATE_FORMAT } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import VpnKeyOutlined from "@mui/icons-material/VpnKeyOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import IconButton from "@mui/material/IconButton";
import Paper from "@mui/material/Paper";
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
import { useNavigate } from "@tanstack/react-router";
import { format } from "date-fns";
import { type FormEvent, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { type ExpiryChoice, expiryDateFor } from "../preferences/api-key-expiry.ts";
import { ExpiryFields } from "../preferences/expiry-fields.tsx";
import { usePageFleet } from "./summary-page.tsx";

interface ProvisioningKey {
  id: number;
  name: string | null;
  description: string | null;
  expiry_date: string | null;
  created_at: string;
}

const formatDate = (value: string | null) => (value ? format(new Date(value), DATE_FORMAT) : "");

function CreateKeyDialog({ fleetId, onClose }: { fleetId: number; onClose: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [choice, setChoice] = useState<ExpiryChoice>("30");
  const [custom, setCustom] = useState("");
  const [errors, setErrors] = useState<{ name?: string; expiry?: string }>({});
  const [created, setCreated] = useState<string>();
  const create = useMutation({
    meta: { reportErrors: false },
    mutationFn: (expiryDate: string | null) =>
      sdk.models.application.generateProvisioningKey({
        slugOrUuidOrId: fleetId,
        keyExpiryDate: expiryDate as string,
        keyName: name.trim(),
        ...(description.trim() ? { keyDescription: description.trim() } : {}),
      }),
    onSuccess: async (key) => {
      setCreated(key);
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleetId, "provisioning-keys"] });
    },
  });
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
  return (
    <Dialog open onClose={created ? undefined : onClose} maxWidth="sm" fullWidth>
      {created ? (
        <>
          <DialogTitle>{t("fleets.keys.created_title")}</DialogTitle>
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
                data-testid="created-key"
                sx={{ flex: 1, fontFamily: MONO_FONT_STACK, fontSize: "0.8125rem", wordBreak: "break-all" }}
              >
                {created}
              </Typography>
              <Button
                size="small"
                startIcon={<ContentCopyOutlined fontSize="small" />}
                onClick={() =>
                  void navigator.clipboard?.writeText(created).then(
                    () => showToast("success", t("preferences.tokens.copied")),
                    () => undefined,
                  )
                }
              >
                {t("preferences.tokens.copy")}
              </Button>
            </Box>
          </DialogContent>
          <DialogActions>
            <Button variant="contained" onClick={onClose}>
              {t("preferences.tokens.done")}
            </Button>
          </DialogActions>
        </>
      ) : (
        <form noValidate onSubmit={submit}>
          <DialogTitle>{t("fleets.keys.create")}</DialogTitle>
          <DialogContent>
            <Stack spacing={2} sx={{ pt: 1 }}>
              {create.isError ? <Alert severity="error">{errorText(create.error)}</Alert> : null}
              <TextField
                label={t("preferences.tokens.name")}
                autoFocus
                fullWidth
                value={name}
                onChange={(event) => setName(event.target.value)}
                error={Boolean(errors.name)}
                helperText={errors.name}
              />
              <TextField
                label={t("preferences.tokens.description")}
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
            </Stack>
          </DialogContent>
          <DialogActions>
            <Button onClick={onClose}>{t("preferences.tokens.cancel")}</Button>
            <Button type="submit" variant="contained" loading={create.isPending}>
              {t("fleets.keys.create")}
            </Button>
          </DialogActions>
        </form>
      )}
    </Dialog>
  );
}

/** `/fleets/{id}/api-keys` (spec 2 §2): the fleet's provisioning keys; needs api_key.read (else `/`). */
export function FleetApiKeysPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { fleetId, fleet, abilities } = usePageFleet();
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ProvisioningKey>();
  const refused = fleet !== undefined && !abilities.apiKeys;
  useEffect(() => {
    if (refused) void navigate({ to: "/", replace: true });
  }, [refused, navigate]);
  const keys = useQuery({
    queryKey: ["fleet", fleetId, "provisioning-keys"],
    enabled: fleet !== undefined && abilities.apiKeys,
    queryFn: () =>
      sdk.models.apiKey.getProvisioningApiKeysByApplication(fleetId, {
        $select: ["id", "name", "description", "expiry_date", "created_at"],
        $orderby: { created_at: "desc" },
      }) as unknown as Promise<ProvisioningKey[]>,
  });
  const revoke = useMutation({
    mutationFn: (id: number) => sdk.models.apiKey.revoke(id),
    onSuccess: () => {
      showToast("success", t("fleets.keys.revoked"));
      setRevoking(undefined);
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ["fleet", fleetId, "provisioning-keys"] }),
  });
  if (!fleet || refused) return null;
  const rows = keys.data ?? [];
  const now = Date.now();
  return (
    <>
      <PageHeader
        title={t("fleets.keys.title")}
        description={t("fleets.keys.description", { name: fleet.app_name })}
        actions={
          abilities.createApiKeys ? (
            <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setCreating(true)}>
              {t("fleets.keys.create")}
            </Button>
          ) : null
        }
      />
      {keys.isSuccess && rows.length === 0 ? (
        <EmptyState icon={<VpnKeyOutlined />} title={t("fleets.keys.empty_title")} text={t("fleets.keys.empty_text")} />
      ) : (
        <Paper variant="outlined">
          <Table size="small" aria-label={t("fleets.keys.title")}>
            <TableHead>
              <TableRow>
                <TableCell>{t("preferences.tokens.name")}</TableCell>
                <TableCell>{t("preferences.tokens.description")}</TableCell>
                <TableCell>{t("fleets.columns.created")}</TableCell>
                <TableCell>{t("preferences.tokens.expiry")}</TableCell>
                <TableCell />
              </TableRow>
            </TableHead>
            <TableBody>
              {rows.map((key) => (
                <TableRow key={key.id} hover>
                  <TableCell sx={{ fontWeight: 600 }}>{key.name || t("fleets.keys.unnamed")}</TableCell>
                  <TableCell sx={{ color: "text.secondary" }}>{key.description}</TableCell>
                  <TableCell>{formatDate(key.created_at)}</TableCell>
                  <TableCell>
                    {key.expiry_date
                      ? new Date(key.expiry_date).getTime() < now
                        ? t("fleets.keys.expired", { date: formatDate(key.expiry_date) })
                        : formatDate(key.expiry_date)
                      : t("preferences.tokens.never")}
                  </TableCell>
                  <TableCell align="right" padding="checkbox">
                    {abilities.createApiKeys ? (
                      <Tooltip title={t("fleets.keys.revoke")}>
                        <IconButton
                          size="small"
                          aria-label={t("fleets.keys.revoke_named", { name: key.name ?? key.id })}
                          onClick={() => setRevoking(key)}
                        >
                          <DeleteOutlined fontSize="small" />
                        </IconButton>
                      </Tooltip>
                    ) : null}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Paper>
      )}
      {creating ? <CreateKeyDialog fleetId={fleetId} onClose={() => setCreating(false)} /> : null}
      <ConfirmDialog
        open={revoking !== undefined}
        danger
        title={t("fleets.keys.revoke")}
        text={t("fleets.keys.revoke_text")}
        items={revoking ? [revoking.name ?? String(revoking.id)] : []}
        confirmLabel={t("fleets.keys.revoke")}
        busy={revoke.isPending}
        onConfirm={() => revoking && revoke.mutate(revoking.id)}
        onClose={() => setRevoking(undefined)}
      />
    </>
  );
}
