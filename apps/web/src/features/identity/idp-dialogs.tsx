import UploadFileOutlined from "@mui/icons-material/UploadFileOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import MenuItem from "@mui/material/MenuItem";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { type ChangeEvent, type FormEvent, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { apiErrorCode, errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { pineOf, useTeams } from "../orgs/data.ts";
import type { AdminOrganization, IdentityProvider } from "./data.ts";
import { type IdpForm, type IdpFormErrors, idpBody, idpFormComplete, idpFormErrors } from "./form.ts";
import { MetadataError, readMetadataFile } from "./metadata.ts";

const EMPTY: IdpForm = { sso_identifier: "", entry_point: "", issuer: "", certificate: "" };

/** A team of the organization, or none (spec 3 §3: a membership may grant access to one team). */
export function TeamPicker(props: {
  orgId: number | undefined;
  value: number | null;
  label: string;
  onChange: (team: number | null) => void;
  size?: "small" | "medium";
  disabled?: boolean;
}) {
  const { t } = useTranslation();
  const teams = useTeams(props.orgId ?? 0, props.orgId !== undefined, true);
  return (
    <TextField
      select
      fullWidth
      size={props.size}
      margin={props.size === "small" ? "none" : "dense"}
      label={props.label}
      disabled={props.disabled || props.orgId === undefined}
      value={props.value === null ? "" : String(props.value)}
      onChange={(event) => props.onChange(event.target.value === "" ? null : Number(event.target.value))}
      slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
    >
      <MenuItem value="">
        <em>{t("identity_provider.no_team")}</em>
      </MenuItem>
      {(teams.data ?? []).map((team) => (
        <MenuItem key={team.id} value={String(team.id)}>
          {team.name}
        </MenuItem>
      ))}
    </TextField>
  );
}

/**
 * Add or edit an identity provider (spec 1 §5; spec 3 §2, §5, §7): SSO identifier, entry point,
 * issuer and certificate, typed or filled in from the IdP's metadata XML. Adding also gives it
 * its first organization (and optionally a team): POST identity_provider, then its membership.
 */
export function IdentityProviderDialog(props: {
  provider?: IdentityProvider;
  /** The organizations the caller administers on a plan with SAML (adding only). */
  organizations?: AdminOrganization[];
  onClose: () => void;
  onSaved: (id: number) => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const editing = props.provider !== undefined;
  const [form, setForm] = useState<IdpForm>(
    props.provider
      ? {
          sso_identifier: props.provider.sso_identifier,
          entry_point: props.provider.entry_point,
          issuer: props.provider.issuer,
          certificate: props.provider.certificate,
        }
      : EMPTY,
  );
  const [touched, setTouched] = useState<Partial<Record<keyof IdpForm, boolean>>>({});
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<IdpFormErrors>({});
  const [error, setError] = useState<string>();
  const [metadataNote, setMetadataNote] = useState<{ ok: boolean; text: string }>();
  const [busy, setBusy] = useState(false);
  const organizations = props.organizations ?? [];
  const [orgId, setOrgId] = useState<number | undefined>(organizations.length === 1 ? organizations[0]?.id : undefined);
  const [teamId, setTeamId] = useState<number | null>(null);
  // A provider created before its membership failed: a retry updates it instead of creating another.
  const created = useRef<number>(undefined);
  const fileInput = useRef<HTMLInputElement>(null);

  const local = idpFormErrors(form);
  const errors: IdpFormErrors = {
    sso_identifier: serverErrors.sso_identifier ?? local.sso_identifier,
    entry_point: serverErrors.entry_point ?? local.entry_point,
    issuer: serverErrors.issuer ?? local.issuer,
    certificate: serverErrors.certificate ?? local.certificate,
  };
  const shown = (key: keyof IdpForm) => (submitted || touched[key] ? errors[key] : undefined);
  const set = (key: keyof IdpForm) => (event: ChangeEvent<HTMLInputElement>) => {
    setForm((current) => ({ ...current, [key]: event.target.value }));
    setServerErrors((current) => ({ ...current, [key]: undefined }));
  };
  const blur = (key: keyof IdpForm) => () => setTouched((current) => ({ ...current, [key]: true }));

  const upload = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (!file) return;
    try {
      const metadata = await readMetadataFile(file);
      setForm((current) => ({
        ...current,
        entry_point: metadata.entryPoint,
        issuer: metadata.issuer,
        certificate: metadata.certificate,
      }));
      setServerErrors({});
      setTouched((current) => ({ ...current, entry_point: true, issuer: true, certificate: true }));
      setMetadataNote({ ok: true, text: t("identity_provider.metadata_loaded", { name: file.name }) });
    } catch (caught) {
      const tooLarge = caught instanceof MetadataError && caught.reason === "too_large";
      setMetadataNote({
        ok: false,
        text: tooLarge ? t("errors.saml_metadata_too_large") : t("errors.failed_to_parse_saml_metadata"),
      });
    }
  };

  const complete = idpFormComplete(form) && (editing || orgId !== undefined);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (!complete || Object.values(idpFormErrors(form)).some(Boolean)) return;
    setBusy(true);
    setError(undefined);
    const body = idpBody(form);
    try {
      let id = props.provider?.id ?? created.current;
      if (id !== undefined) {
        await pineOf(sdk).patch({ resource: "identity_provider", id, body: { ...body } });
      } else {
        id = (await pineOf(sdk).post<{ id: number }>({ resource: "identity_provider", body: { ...body } })).id;
        created.current = id;
      }
      if (!editing) {
        await pineOf(sdk).post({
          resource: "identity_provider_membership",
          body: {
            organization: orgId,
            is_authorized_by__identity_provider: id,
            ...(teamId !== null ? { grants_access_to__team: teamId } : {}),
          },
        });
      }
      showToast("success", editing ? t("identity_provider.updated") : t("identity_provider.created"));
      props.onSaved(id);
    } catch (caught) {
      if (apiErrorCode(caught) === "invalid_certificate_format") {
        setServerErrors({ certificate: t("errors.invalid_certificate_format") });
      } else setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  const loginUrl = `${window.location.origin}/saml/${form.sso_identifier.trim() || "…"}`;
  return (
    <Dialog open onClose={props.onClose} maxWidth="sm" fullWidth>
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle>{editing ? t("identity_provider.edit_title") : t("identity_provider.add")}</DialogTitle>
        <DialogContent>
          <Stack spacing={2} sx={{ pt: 1 }}>
            {error ? (
              <Alert severity="error" role="alert">
                {error}
              </Alert>
            ) : null}
            <TextField
              label={t("identity_provider.sso_identifier")}
              required
              autoFocus={!editing}
              value={form.sso_identifier}
              onChange={set("sso_identifier")}
              onBlur={blur("sso_identifier")}
              error={Boolean(shown("sso_identifier"))}
              helperText={shown("sso_identifier") ?? t("identity_provider.sso_identifier_help", { url: loginUrl })}
              slotProps={{ htmlInput: { autoCapitalize: "none", spellCheck: false } }}
            />
            <Box sx={{ display: "flex", alignItems: "center", gap: 1.5, flexWrap: "wrap" }}>
              <input
                ref={fileInput}
                type="file"
                accept=".xml,application/xml,text/xml,application/samlmetadata+xml"
                hidden
                aria-label={t("identity_provider.upload_metadata")}
                data-testid="metadata-input"
                onChange={(event) => void upload(event)}
              />
              <Button variant="outlined" startIcon={<UploadFileOutlined />} onClick={() => fileInput.current?.click()}>
                {t("identity_provider.upload_metadata")}
              </Button>
              {metadataNote ? (
                <Typography
                  variant="body2"
                  role={metadataNote.ok ? "status" : "alert"}
                  color={metadataNote.ok ? "success.main" : "error"}
                  sx={{ flex: 1, minWidth: 200 }}
                >
                  {metadataNote.text}
                </Typography>
              ) : null}
            </Box>
            <TextField
              label={t("identity_provider.entry_point_label")}
              required
              value={form.entry_point}
              onChange={set("entry_point")}
              onBlur={blur("entry_point")}
              error={Boolean(shown("entry_point"))}
              helperText={shown("entry_point") ?? t("identity_provider.entry_point_help")}
            />
            <TextField
              label={t("identity_provider.issuer")}
              required
              value={form.issuer}
              onChange={set("issuer")}
              onBlur={blur("issuer")}
              error={Boolean(shown("issuer"))}
              helperText={shown("issuer") ?? t("identity_provider.issuer_help")}
            />
            <TextField
              label={t("identity_provider.certificate")}
              required
              multiline
              minRows={4}
              maxRows={8}
              value={form.certificate}
              onChange={set("certificate")}
              onBlur={blur("certificate")}
              error={Boolean(shown("certificate"))}
              helperText={shown("certificate") ?? t("identity_provider.certificate_help")}
              slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: MONO_FONT_STACK, fontSize: 12 } } }}
            />
            {editing ? null : organizations.length === 0 ? (
              <Alert severity="info">{t("identity_provider.no_saml_orgs")}</Alert>
            ) : (
              <Stack direction={{ xs: "column", sm: "row" }} spacing={2}>
                <TextField
                  select
                  fullWidth
                  required
                  label={t("identity_provider.first_organization")}
                  value={orgId === undefined ? "" : String(orgId)}
                  onChange={(event) => {
                    setOrgId(Number(event.target.value));
                    setTeamId(null);
                  }}
                  error={submitted && orgId === undefined}
                  helperText={t("identity_provider.first_organization_help")}
                >
                  {organizations.map((org) => (
                    <MenuItem key={org.id} value={String(org.id)}>
                      {org.name}
                    </MenuItem>
                  ))}
                </TextField>
                <TeamPicker
                  orgId={orgId}
                  value={teamId}
                  label={t("identity_provider.team_optional")}
                  onChange={setTeamId}
                />
              </Stack>
            )}
          </Stack>
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2 }}>
          <Button onClick={props.onClose}>{t("confirm.cancel")}</Button>
          <Button type="submit" variant="contained" disabled={!complete} loading={busy}>
            {editing ? t("identity_provider.save") : t("identity_provider.create")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}

/** Adds organizations to a provider (spec 3 §2, §4, §8): at least one; added_idp_memberships. */
export function AddOrganizationsDialog(props: {
  providerId: number;
  organizations: AdminOrganization[];
  onClose: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const [selected, setSelected] = useState<number[]>([]);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (selected.length === 0) {
      setError(t("identity_provider.organizations_required"));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      // One at a time (spec 3 §9): each needs the checks of the ones before.
      for (const organization of selected) {
        await pineOf(sdk).post({
          resource: "identity_provider_membership",
          body: { organization, is_authorized_by__identity_provider: props.providerId },
        });
      }
      showToast("success", t("identity_provider.added_idp_memberships"));
      props.onDone();
      props.onClose();
    } catch (caught) {
      setError(errorText(caught));
      props.onDone();
    } finally {
      setBusy(false);
    }
  };
  const names = new Map(props.organizations.map((org) => [org.id, org.name]));
  return (
    <Dialog open onClose={props.onClose} maxWidth="xs" fullWidth>
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle>{t("identity_provider.add_organizations")}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            {t("identity_provider.add_organizations_text")}
          </Typography>
          {error ? (
            <Alert severity="error" role="alert" sx={{ mb: 1 }}>
              {error}
            </Alert>
          ) : null}
          {props.organizations.length === 0 ? (
            <Alert severity="info">{t("identity_provider.no_more_organizations")}</Alert>
          ) : (
            <TextField
              select
              fullWidth
              margin="dense"
              label={t("identity_provider.organizations")}
              value={selected}
              slotProps={{
                select: {
                  multiple: true,
                  renderValue: (value) => (value as number[]).map((id) => names.get(id)).join(", "),
                },
              }}
              onChange={(event) => {
                setSelected(event.target.value as unknown as number[]);
                setError(undefined);
              }}
            >
              {props.organizations.map((org) => (
                <MenuItem key={org.id} value={org.id}>
                  {org.name}
                </MenuItem>
              ))}
            </TextField>
          )}
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2 }}>
          <Button onClick={props.onClose}>{t("confirm.cancel")}</Button>
          <Button type="submit" variant="contained" loading={busy} disabled={selected.length === 0}>
            {t("orgs.add")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
