import { DATE_FORMAT } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import VpnKeyOutlined from "@mui/icons-material/VpnKeyOutlined";
import Button from "@mui/material/Button";
import IconButton from "@mui/material/IconButton";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { format } from "date-fns";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { showToast } from "../../lib/toasts.ts";
import { NewKeyDialog } from "../preferences/new-key-dialog.tsx";
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
  return (
    <NewKeyDialog
      title={t("fleets.keys.create")}
      createdTitle={t("fleets.keys.created_title")}
      create={(key) =>
        sdk.models.application.generateProvisioningKey({
          slugOrUuidOrId: fleetId,
          keyExpiryDate: key.expiryDate as string,
          keyName: key.name,
          ...(key.description ? { keyDescription: key.description } : {}),
        })
      }
      onCreated={() => queryClient.invalidateQueries({ queryKey: ["fleet", fleetId, "provisioning-keys"] })}
      onClose={onClose}
    />
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
