import { DATE_FORMAT } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import VpnKeyOutlined from "@mui/icons-material/VpnKeyOutlined";
import Button from "@mui/material/Button";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { format } from "date-fns";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { AccessList, ConfirmRemoveDialog } from "../../components/access-list.tsx";
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
      {keys.data ? (
        <AccessList
          label={t("fleets.keys.title")}
          rows={keys.data}
          hover
          paper
          empty={
            <EmptyState
              icon={<VpnKeyOutlined />}
              title={t("fleets.keys.empty_title")}
              text={t("fleets.keys.empty_text")}
            />
          }
          columns={[
            {
              header: t("preferences.tokens.name"),
              cell: (key) => key.name || t("fleets.keys.unnamed"),
              sx: { fontWeight: 600 },
            },
            {
              header: t("preferences.tokens.description"),
              cell: (key) => key.description,
              sx: { color: "text.secondary" },
            },
            { header: t("fleets.columns.created"), cell: (key) => formatDate(key.created_at) },
            {
              header: t("preferences.tokens.expiry"),
              cell: (key) =>
                key.expiry_date
                  ? new Date(key.expiry_date).getTime() < now
                    ? t("fleets.keys.expired", { date: formatDate(key.expiry_date) })
                    : formatDate(key.expiry_date)
                  : t("preferences.tokens.never"),
            },
          ]}
          actions={
            abilities.createApiKeys
              ? [
                  {
                    icon: <DeleteOutlined fontSize="small" />,
                    label: (key) => t("fleets.keys.revoke_named", { name: key.name ?? key.id }),
                    tooltip: () => t("fleets.keys.revoke"),
                    onClick: setRevoking,
                  },
                ]
              : []
          }
        />
      ) : null}
      {creating ? <CreateKeyDialog fleetId={fleetId} onClose={() => setCreating(false)} /> : null}
      <ConfirmRemoveDialog
        target={revoking}
        name={(key) => key.name ?? String(key.id)}
        title={t("fleets.keys.revoke")}
        text={t("fleets.keys.revoke_text")}
        confirmLabel={t("fleets.keys.revoke")}
        busy={revoke.isPending}
        onConfirm={(key) => revoke.mutate(key.id)}
        onClose={() => setRevoking(undefined)}
      />
    </>
  );
}
