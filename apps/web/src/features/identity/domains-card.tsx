import { type DomainState, normalizeDomain } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import IconButton from "@mui/material/IconButton";
import MenuItem from "@mui/material/MenuItem";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { errorText } from "../../lib/errors.ts";
import { formatDate, formatFullDate } from "../../lib/format.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { Card } from "../orgs/ui.tsx";
import { domainKeys, domainsApi, type OrganizationDomain, useOrganizationDomains } from "./data.ts";

/** An organization of the provider whose domains the caller manages (organization.manage_domains). */
export interface DomainOrganization {
  id: number;
  name: string;
}

const STATE_COLOR: Record<DomainState, "success" | "warning" | "error"> = {
  verified: "success",
  pending: "warning",
  failed: "error",
};

function copy(text: string, message: string) {
  void navigator.clipboard?.writeText(text).then(
    () => showToast("success", message),
    () => undefined,
  );
}

/**
 * The identity provider's verified domains (docs/identity.md "Verified domains"): the domains of
 * its organizations the caller administers, each with its state, when it was last checked and
 * why it is not verified, the TXT record to publish, and Verify / Remove. The provider signs in
 * only addresses at verified domains. Organizations the caller does not administer are not
 * shown (the server answers their domains to their administrators only).
 */
export function VerifiedDomainsCard(props: { organizations: DomainOrganization[]; canManage: boolean }) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const queryClient = useQueryClient();
  const api = domainsApi(sdk, config.apiUrl);
  const orgIds = props.organizations.map((org) => org.id);
  const domains = useOrganizationDomains(orgIds);
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<OrganizationDomain>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: domainKeys.all });
  const names = new Map(props.organizations.map((org) => [org.id, org.name]));
  const manageable = props.canManage && props.organizations.length > 0;

  const verify = useMutation({
    mutationFn: (domain: OrganizationDomain) => api.verify(domain.organization, domain.id),
    meta: { reportErrors: false },
    onSuccess: (checked) => {
      if (checked.state === "verified")
        showToast("success", t("identity_provider.domain_verified", { domain: checked.domain }));
      // Not found (yet): the domain's row says why.
      else showToast("warning", t("identity_provider.domain_not_verified", { domain: checked.domain }));
    },
    onError: (error) => showToast("error", errorText(error)),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (domain: OrganizationDomain) => api.remove(domain.organization, domain.id),
    meta: { reportErrors: false },
    onSuccess: () => {
      showToast("success", t("identity_provider.domain_removed"));
      setRemoving(undefined);
    },
    onSettled: refresh,
  });

  const addButton = (
    <Button size="small" startIcon={<AddOutlined />} disabled={!manageable} onClick={() => setAdding(true)}>
      {t("identity_provider.add_domain")}
    </Button>
  );
  const list = domains.data ?? [];
  return (
    <Card
      title={t("identity_provider.domains")}
      action={
        manageable ? (
          addButton
        ) : (
          <Tooltip title={t("warnings.cannot_interact_not_an_admin_of_this_idp")}>
            <span>{addButton}</span>
          </Tooltip>
        )
      }
    >
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }}>
        {t("identity_provider.domains_text")}
      </Typography>
      {domains.isError ? (
        <Alert severity="error" role="alert">
          {errorText(domains.error)}
        </Alert>
      ) : list.length === 0 ? (
        <Typography variant="body2" color="text.secondary" sx={{ py: 1 }}>
          {domains.isPending && orgIds.length > 0
            ? t("identity_provider.domains_loading")
            : t("identity_provider.no_domains")}
        </Typography>
      ) : (
        <Box component="ul" aria-label={t("identity_provider.domains")} sx={{ listStyle: "none", m: 0, p: 0 }}>
          {list.map((domain) => (
            <DomainItem
              key={domain.id}
              domain={domain}
              organization={props.organizations.length > 1 ? names.get(domain.organization) : undefined}
              busy={verify.isPending && verify.variables?.id === domain.id}
              onVerify={() => verify.mutate(domain)}
              onRemove={() => setRemoving(domain)}
            />
          ))}
        </Box>
      )}
      {adding ? (
        <AddDomainDialog
          organizations={props.organizations}
          onClose={() => setAdding(false)}
          onAdded={() => {
            setAdding(false);
            void refresh();
          }}
        />
      ) : null}
      <ConfirmDialog
        open={removing !== undefined}
        danger
        title={t("identity_provider.remove_domain_title")}
        text={t("identity_provider.remove_domain_text")}
        items={removing ? [removing.domain] : []}
        confirmLabel={t("identity_provider.remove")}
        busy={remove.isPending}
        error={remove.isError ? errorText(remove.error) : undefined}
        onConfirm={() => removing && remove.mutate(removing)}
        onClose={() => {
          setRemoving(undefined);
          remove.reset();
        }}
      />
    </Card>
  );
}

/** One domain: name, state and last check; the TXT record to publish; Verify and Remove. */
function DomainItem(props: {
  domain: OrganizationDomain;
  organization: string | undefined;
  busy: boolean;
  onVerify: () => void;
  onRemove: () => void;
}) {
  const { t } = useTranslation();
  const { domain } = props;
  const verified = domain.state === "verified";
  return (
    <Box
      component="li"
      aria-label={domain.domain}
      sx={{ py: 1.5, borderTop: 1, borderColor: "divider", display: "grid", rowGap: 1 }}
    >
      <Stack direction="row" spacing={1.5} sx={{ alignItems: "center", flexWrap: "wrap", rowGap: 1 }}>
        <Typography variant="body1" sx={{ fontWeight: 600, fontFamily: MONO_FONT_STACK, fontSize: 14 }}>
          {domain.domain}
        </Typography>
        <Chip
          size="small"
          variant="outlined"
          color={STATE_COLOR[domain.state]}
          label={t(`identity_provider.domain_state.${domain.state}`)}
        />
        {props.organization ? (
          <Typography variant="body2" color="text.secondary">
            {props.organization}
          </Typography>
        ) : null}
        <Box sx={{ flex: 1 }} />
        <Typography variant="caption" color="text.secondary">
          {domain.last_checked_at ? (
            <Tooltip title={formatFullDate(domain.last_checked_at)}>
              <span>{t("identity_provider.domain_checked", { date: formatDate(domain.last_checked_at) })}</span>
            </Tooltip>
          ) : (
            t("identity_provider.domain_never_checked")
          )}
        </Typography>
        <Button size="small" variant={verified ? "text" : "outlined"} loading={props.busy} onClick={props.onVerify}>
          {verified ? t("identity_provider.check_again") : t("identity_provider.verify")}
        </Button>
        <Tooltip title={t("identity_provider.remove_domain", { domain: domain.domain })}>
          <IconButton
            size="small"
            color="error"
            aria-label={t("identity_provider.remove_domain", { domain: domain.domain })}
            onClick={props.onRemove}
          >
            <DeleteOutlined fontSize="small" />
          </IconButton>
        </Tooltip>
      </Stack>
      {verified ? null : (
        <Box
          role="group"
          aria-label={t("identity_provider.txt_record")}
          sx={{
            display: "grid",
            gridTemplateColumns: { xs: "1fr auto", sm: "auto 1fr auto" },
            alignItems: "center",
            columnGap: 2,
            px: 1.5,
            py: 0.5,
            bgcolor: "action.hover",
            borderRadius: 1,
          }}
        >
          <Typography variant="body2" color="text.secondary" sx={{ gridColumn: { xs: "1 / -1", sm: "auto" } }}>
            {t("identity_provider.txt_record_on", { domain: domain.domain })}
          </Typography>
          <Typography
            variant="body2"
            data-testid={`txt-${domain.domain}`}
            sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13, overflowWrap: "anywhere", minWidth: 0 }}
          >
            {domain.verification_record}
          </Typography>
          <Tooltip title={t("identity_provider.copy", { name: t("identity_provider.txt_record") })}>
            <IconButton
              size="small"
              aria-label={t("identity_provider.copy", { name: t("identity_provider.txt_record") })}
              onClick={() => copy(domain.verification_record, t("identity_provider.copied"))}
            >
              <ContentCopyOutlined sx={{ fontSize: 16 }} />
            </IconButton>
          </Tooltip>
        </Box>
      )}
      {domain.last_check_error ? (
        <Alert severity={domain.state === "failed" ? "error" : "warning"} sx={{ py: 0 }}>
          {domain.last_check_error}
        </Alert>
      ) : null}
    </Box>
  );
}

/** Adds a domain to one of the organizations; it starts pending, with its TXT record to publish. */
function AddDomainDialog(props: { organizations: DomainOrganization[]; onClose: () => void; onAdded: () => void }) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const [orgId, setOrgId] = useState<number | undefined>(props.organizations[0]?.id);
  const [value, setValue] = useState("");
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const normalized = normalizeDomain(value);
  const problem = "problem" in normalized ? normalized.problem : undefined;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (problem || orgId === undefined || "problem" in normalized) return;
    setBusy(true);
    setError(undefined);
    try {
      const added = await domainsApi(sdk, config.apiUrl).add(orgId, normalized.domain);
      showToast("success", t("identity_provider.domain_added", { domain: added.domain }));
      props.onAdded();
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open onClose={props.onClose} maxWidth="xs" fullWidth>
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle>{t("identity_provider.add_domain")}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            {t("identity_provider.add_domain_text")}
          </Typography>
          {error ? (
            <Alert severity="error" role="alert" sx={{ mb: 1 }}>
              {error}
            </Alert>
          ) : null}
          <Stack spacing={2} sx={{ pt: 1 }}>
            {props.organizations.length > 1 ? (
              <TextField
                select
                fullWidth
                label={t("identity_provider.organization")}
                value={orgId === undefined ? "" : String(orgId)}
                onChange={(event) => setOrgId(Number(event.target.value))}
              >
                {props.organizations.map((org) => (
                  <MenuItem key={org.id} value={String(org.id)}>
                    {org.name}
                  </MenuItem>
                ))}
              </TextField>
            ) : null}
            <TextField
              autoFocus
              fullWidth
              required
              label={t("identity_provider.domain")}
              placeholder="example.com"
              value={value}
              onChange={(event) => {
                setValue(event.target.value);
                setError(undefined);
              }}
              onBlur={() => setTouched(value !== "")}
              error={touched && Boolean(problem)}
              helperText={(touched && problem) || t("identity_provider.domain_help")}
              slotProps={{ htmlInput: { spellCheck: false, autoCapitalize: "none", maxLength: 300 } }}
            />
          </Stack>
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2 }}>
          <Button onClick={props.onClose}>{t("confirm.cancel")}</Button>
          <Button type="submit" variant="contained" loading={busy} disabled={value.trim() === ""}>
            {t("identity_provider.create")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
