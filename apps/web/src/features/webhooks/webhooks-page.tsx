import AddOutlined from "@mui/icons-material/AddOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import EditOutlined from "@mui/icons-material/EditOutlined";
import ExpandLessOutlined from "@mui/icons-material/ExpandLessOutlined";
import ExpandMoreOutlined from "@mui/icons-material/ExpandMoreOutlined";
import SendOutlined from "@mui/icons-material/SendOutlined";
import WebhookOutlined from "@mui/icons-material/WebhookOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import Collapse from "@mui/material/Collapse";
import Divider from "@mui/material/Divider";
import FormControlLabel from "@mui/material/FormControlLabel";
import IconButton from "@mui/material/IconButton";
import Paper from "@mui/material/Paper";
import Stack from "@mui/material/Stack";
import Switch from "@mui/material/Switch";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { type OrgApplication, useOrgApplications } from "../orgs/data.ts";
import { useNumericParam } from "../orgs/ui.tsx";
import { webhookKeys, webhooksApi } from "./api.ts";
import { DeliveryLog } from "./delivery-log.tsx";
import { formOf, type Webhook } from "./model.ts";
import { SecretDialog, useEventLabel, WebhookDialog } from "./webhook-dialog.tsx";

/** `/orgs/{orgId}/webhooks`: the organization's webhooks for its administrators (the route checks). */
export function WebhooksPage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const queryClient = useQueryClient();
  const orgId = useNumericParam("orgId");
  const api = webhooksApi(sdk, config.apiUrl);
  const webhooks = useQuery({ queryKey: webhookKeys.list(orgId), queryFn: () => api.list(orgId) });
  const apps = useOrgApplications(orgId);
  const fleets = (apps.data ?? []).filter((app) => app.is_of__class === "fleet");
  const [dialog, setDialog] = useState<{ mode: "create" } | { mode: "edit"; webhook: Webhook }>();
  const [secret, setSecret] = useState<string>();
  // One form per opening: a new object on every render would reset what is being typed.
  const initial = useMemo(() => (dialog?.mode === "edit" ? formOf(dialog.webhook) : undefined), [dialog]);
  const [deleting, setDeleting] = useState<Webhook>();
  const [open, setOpen] = useState<number[]>([]);
  const refresh = () => queryClient.invalidateQueries({ queryKey: webhookKeys.list(orgId) });

  const remove = useMutation({
    mutationFn: (webhook: Webhook) => api.remove(orgId, webhook.id),
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("webhooks.deleted"));
      setDeleting(undefined);
      await refresh();
    },
  });

  const submit = async (body: unknown) => {
    if (dialog?.mode === "edit") {
      await api.update(orgId, dialog.webhook.id, body);
      showToast("success", t("webhooks.saved"));
    } else {
      const created = await api.create(orgId, body);
      setSecret(created.secret);
    }
    setDialog(undefined);
    await refresh();
  };

  const list = webhooks.data ?? [];
  return (
    <>
      <PageHeader
        title={t("webhooks.title")}
        description={t("webhooks.description_text")}
        actions={
          list.length > 0 ? (
            <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setDialog({ mode: "create" })}>
              {t("webhooks.add")}
            </Button>
          ) : null
        }
      />
      {webhooks.isPending ? (
        <Typography variant="body2" color="text.secondary" role="status" sx={{ py: 4, textAlign: "center" }}>
          {t("webhooks.loading")}
        </Typography>
      ) : list.length === 0 ? (
        <EmptyState
          icon={<WebhookOutlined />}
          title={t("webhooks.empty_title")}
          text={t("webhooks.empty_text")}
          action={
            <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setDialog({ mode: "create" })}>
              {t("webhooks.add")}
            </Button>
          }
        />
      ) : (
        <Stack spacing={2}>
          {list.map((webhook) => (
            <WebhookCard
              key={webhook.id}
              orgId={orgId}
              webhook={webhook}
              fleets={fleets}
              expanded={open.includes(webhook.id)}
              onToggle={(expand) =>
                setOpen((current) => (expand ? [...current, webhook.id] : current.filter((id) => id !== webhook.id)))
              }
              onEdit={() => setDialog({ mode: "edit", webhook })}
              onDelete={() => setDeleting(webhook)}
            />
          ))}
        </Stack>
      )}
      <WebhookDialog
        open={dialog !== undefined}
        mode={dialog?.mode ?? "create"}
        initial={initial}
        fleets={fleets}
        onSubmit={submit}
        onClose={() => setDialog(undefined)}
      />
      <SecretDialog secret={secret} onClose={() => setSecret(undefined)} />
      <ConfirmDialog
        open={deleting !== undefined}
        title={t("webhooks.delete_title")}
        text={t("webhooks.delete_text")}
        items={deleting ? [deleting.url] : []}
        confirmLabel={t("webhooks.delete")}
        danger
        busy={remove.isPending}
        error={remove.isError ? errorText(remove.error) : undefined}
        onConfirm={() => deleting && remove.mutate(deleting)}
        onClose={() => {
          setDeleting(undefined);
          remove.reset();
        }}
      />
    </>
  );
}

function WebhookCard(props: {
  orgId: number;
  webhook: Webhook;
  fleets: OrgApplication[];
  expanded: boolean;
  onToggle: (expand: boolean) => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const queryClient = useQueryClient();
  const eventLabel = useEventLabel();
  const api = webhooksApi(sdk, config.apiUrl);
  const { webhook, orgId } = props;

  const toggle = useMutation({
    mutationFn: (enabled: boolean) => api.update(orgId, webhook.id, { is_enabled: enabled }),
    onSuccess: async (_data, enabled) => {
      showToast("success", enabled ? t("webhooks.enabled_toast") : t("webhooks.disabled_toast"));
      await queryClient.invalidateQueries({ queryKey: webhookKeys.list(orgId) });
    },
  });
  const test = useMutation({
    mutationFn: () => api.test(orgId, webhook.id),
    onSuccess: async () => {
      showToast("success", t("webhooks.test_queued"));
      props.onToggle(true);
      await queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(orgId, webhook.id) });
    },
  });

  const fleetNames = webhook.fleets
    ? webhook.fleets.map((id) => props.fleets.find((fleet) => fleet.id === id)?.app_name ?? `#${id}`)
    : undefined;
  const logId = `webhook-${webhook.id}-deliveries`;
  return (
    <Paper variant="outlined" component="article" aria-label={webhook.url}>
      <Box sx={{ p: 2, display: "flex", gap: 2, alignItems: "flex-start" }}>
        <Box sx={{ flex: 1, minWidth: 0 }}>
          <Box sx={{ display: "flex", alignItems: "center", gap: 1, flexWrap: "wrap" }}>
            <Typography
              variant="subtitle1"
              component="h2"
              sx={{ fontWeight: 600, fontFamily: "monospace", fontSize: 15, wordBreak: "break-all" }}
            >
              {webhook.url}
            </Typography>
            {/* Enabled is the switch's to say; a disabled webhook stands out. */}
            {webhook.is_enabled ? null : <Chip size="small" color="default" label={t("webhooks.disabled")} />}
          </Box>
          {webhook.description ? (
            <Typography variant="body2" color="text.secondary" sx={{ mt: 0.25 }}>
              {webhook.description}
            </Typography>
          ) : null}
          <Box
            component="dl"
            sx={{
              m: 0,
              mt: 1.5,
              display: "grid",
              gridTemplateColumns: "max-content 1fr",
              columnGap: 2,
              rowGap: 0.75,
              alignItems: "center",
              "& dt": { color: "text.secondary", fontSize: 13 },
              "& dd": { m: 0 },
            }}
          >
            <dt>{t("webhooks.events_label")}</dt>
            <dd>
              <Box sx={{ display: "flex", flexWrap: "wrap", gap: 0.5 }}>
                {webhook.events.map((event) => (
                  <Chip key={event} size="small" variant="outlined" label={eventLabel(event)} />
                ))}
              </Box>
            </dd>
            <dt>{t("webhooks.fleets")}</dt>
            <dd>
              <Typography variant="body2">{fleetNames ? fleetNames.join(", ") : t("webhooks.all_fleets")}</Typography>
            </dd>
            <dt>{t("webhooks.failures")}</dt>
            <dd>
              <Typography
                variant="body2"
                sx={{ color: webhook.consecutive_failures > 0 ? "error.main" : "text.primary", fontWeight: 500 }}
              >
                {t("webhooks.failures_in_a_row", { count: webhook.consecutive_failures })}
              </Typography>
            </dd>
          </Box>
        </Box>
        <Stack direction="row" spacing={0.5} sx={{ alignItems: "center", flexShrink: 0 }}>
          <FormControlLabel
            control={
              <Switch
                checked={webhook.is_enabled}
                disabled={toggle.isPending}
                onChange={(event) => toggle.mutate(event.target.checked)}
              />
            }
            label={t("webhooks.enabled")}
            sx={{ mr: 1 }}
          />
          <Tooltip title={t("webhooks.send_test")}>
            <span>
              <IconButton aria-label={t("webhooks.send_test")} onClick={() => test.mutate()} disabled={test.isPending}>
                <SendOutlined fontSize="small" />
              </IconButton>
            </span>
          </Tooltip>
          <Tooltip title={t("webhooks.edit")}>
            <IconButton aria-label={t("webhooks.edit")} onClick={props.onEdit}>
              <EditOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
          <Tooltip title={t("webhooks.delete")}>
            <IconButton aria-label={t("webhooks.delete")} onClick={props.onDelete}>
              <DeleteOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
        </Stack>
      </Box>
      {!webhook.is_enabled && webhook.disabled_reason ? (
        <Alert severity="error" sx={{ mx: 2, mb: 2 }}>
          {t("webhooks.disabled_because", { reason: webhook.disabled_reason })}
        </Alert>
      ) : null}
      <Divider />
      <Button
        fullWidth
        onClick={() => props.onToggle(!props.expanded)}
        aria-expanded={props.expanded}
        aria-controls={logId}
        endIcon={props.expanded ? <ExpandLessOutlined /> : <ExpandMoreOutlined />}
        sx={{ justifyContent: "space-between", px: 2, py: 1, borderRadius: 0, color: "text.secondary" }}
      >
        {props.expanded ? t("webhooks.hide_deliveries") : t("webhooks.show_deliveries")}
      </Button>
      <Collapse in={props.expanded} unmountOnExit>
        <Box id={logId} component="section" aria-label={t("webhooks.delivery_log")} sx={{ px: 2, pb: 2 }}>
          <DeliveryLog orgId={orgId} webhookId={webhook.id} label={t("webhooks.delivery_log")} />
        </Box>
      </Collapse>
    </Paper>
  );
}
