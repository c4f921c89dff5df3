import {
  ACCOUNT_DELETION_REDIRECT_MS,
  changeEmailSchema,
  changePasswordSchema,
  DATE_FORMAT,
  PASSWORDS_DONT_MATCH,
} from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import FormControlLabel from "@mui/material/FormControlLabel";
import Stack from "@mui/material/Stack";
import Switch from "@mui/material/Switch";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "@tanstack/react-router";
import { format } from "date-fns";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { PasswordField } from "../../components/form-fields.tsx";
import { errorText, getStatusCode } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { type FieldErrors, fieldErrors, hasErrors } from "../../lib/validation.ts";
import { notePasswordLength } from "../auth/password-too-long.ts";
import { ProfileForm } from "../auth/profile-form.tsx";
import { useReauth } from "../auth/reauth.tsx";
import { logOut, type SessionUser, sessionKeys } from "../auth/session.ts";
import { Section } from "./section.tsx";
import { useSessionUser } from "./use-user.ts";

const rowSx = {
  display: "grid",
  gridTemplateColumns: { xs: "1fr", sm: "160px 1fr" },
  gap: { xs: 0.25, sm: 2 },
  alignItems: "center",
  minHeight: 44,
  py: 0.75,
};

function AccountSummary({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  return (
    <Section title={t("preferences.details.account")}>
      <Box sx={{ "& > div + div": { borderTop: 1, borderColor: "divider" } }}>
        <Box sx={rowSx}>
          <Typography variant="body2" color="text.secondary">
            {t("preferences.details.username")}
          </Typography>
          <Typography variant="body2" sx={{ fontWeight: 500 }}>
            {user.username}
          </Typography>
        </Box>
        <Box sx={rowSx}>
          <Typography variant="body2" color="text.secondary">
            {t("preferences.details.email")}
          </Typography>
          <Box sx={{ display: "flex", alignItems: "center", gap: 1 }}>
            <Typography variant="body2" sx={{ fontWeight: 500 }}>
              {user.email}
            </Typography>
            <Chip
              size="small"
              color={user.is_verified ? "success" : "warning"}
              variant="outlined"
              label={user.is_verified ? t("preferences.details.verified") : t("preferences.details.unverified")}
            />
          </Box>
        </Box>
        {user.created_at ? (
          <Box sx={rowSx}>
            <Typography variant="body2" color="text.secondary">
              {t("preferences.details.created")}
            </Typography>
            <Typography variant="body2">{format(new Date(user.created_at), DATE_FORMAT)}</Typography>
          </Box>
        ) : null}
      </Box>
    </Section>
  );
}

function ChangeEmail() {
  const { t } = useTranslation();
  const api = useAccountApi();
  const withReauth = useReauth();
  const queryClient = useQueryClient();
  const [values, setValues] = useState({ email: "", password: "" });
  const [errors, setErrors] = useState<FieldErrors>({});
  const change = useMutation({
    mutationFn: () => withReauth(() => api.changeEmail({ email: values.email.trim(), password: values.password })),
    meta: { reportErrors: false },
    onSuccess: async (result) => {
      setValues({ email: "", password: "" });
      // An email change ends either as successful or as pending verification (spec 1 §4).
      const pending = result?.must_be_verified && !result.is_verified;
      showToast("success", pending ? t("preferences.details.email_pending") : t("preferences.details.email_changed"));
      await queryClient.invalidateQueries({ queryKey: sessionKeys.state });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = fieldErrors(changeEmailSchema, values);
    setErrors(found);
    if (!hasErrors(found)) change.mutate();
  };
  return (
    <Section title={t("preferences.details.email_title")} text={t("preferences.details.email_text")}>
      <Box component="form" noValidate onSubmit={submit}>
        <Stack spacing={2}>
          {change.isError ? <Alert severity="error">{errorText(change.error)}</Alert> : null}
          <Stack direction={{ xs: "column", sm: "row" }} spacing={2}>
            <TextField
              label={t("preferences.details.new_email")}
              type="email"
              name="new-email"
              autoComplete="email"
              size="small"
              fullWidth
              value={values.email}
              onChange={(event) => setValues({ ...values, email: event.target.value })}
              error={Boolean(errors.email)}
              helperText={errors.email}
            />
            <PasswordField
              label={t("preferences.details.current_password")}
              name="email-password"
              autoComplete="current-password"
              size="small"
              fullWidth
              value={values.password}
              onChange={(event) => setValues({ ...values, password: event.target.value })}
              error={Boolean(errors.password)}
              helperText={errors.password}
            />
          </Stack>
          <Box>
            <Button type="submit" variant="outlined" loading={change.isPending}>
              {t("preferences.details.change_email")}
            </Button>
          </Box>
        </Stack>
      </Box>
    </Section>
  );
}

function ChangePassword() {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const api = useAccountApi();
  const withReauth = useReauth();
  const [values, setValues] = useState({ currentPassword: "", password: "", confirmation: "" });
  const [errors, setErrors] = useState<FieldErrors>({});
  const change = useMutation({
    mutationFn: () =>
      withReauth(() => api.changePassword({ currentPassword: values.currentPassword, password: values.password })),
    meta: { reportErrors: false },
    onSuccess: async (token) => {
      // The server ends the other sessions and answers this one's new token.
      if (typeof token === "string" && token) await sdk.auth.loginWithToken(token);
      notePasswordLength(values.password);
      setValues({ currentPassword: "", password: "", confirmation: "" });
      showToast("success", t("preferences.details.password_changed"));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = fieldErrors(changePasswordSchema, values);
    if (!found.password && values.password !== values.confirmation) found.confirmation = PASSWORDS_DONT_MATCH;
    setErrors(found);
    if (!hasErrors(found)) change.mutate();
  };
  const field = (key: keyof typeof values, label: string, autoComplete: string) => (
    <PasswordField
      label={label}
      name={key}
      autoComplete={autoComplete}
      size="small"
      fullWidth
      value={values[key]}
      onChange={(event) => setValues({ ...values, [key]: event.target.value })}
      error={Boolean(errors[key])}
      helperText={errors[key]}
    />
  );
  return (
    <Section title={t("preferences.details.password_title")} text={t("preferences.details.password_text")}>
      <Box component="form" noValidate onSubmit={submit}>
        <Stack spacing={2}>
          {change.isError ? <Alert severity="error">{errorText(change.error)}</Alert> : null}
          <Box sx={{ maxWidth: { sm: "calc(50% - 8px)" } }}>
            {field("currentPassword", t("preferences.details.current_password"), "current-password")}
          </Box>
          <Stack direction={{ xs: "column", sm: "row" }} spacing={2}>
            {field("password", t("preferences.details.new_password"), "new-password")}
            {field("confirmation", t("preferences.details.confirmation"), "new-password")}
          </Stack>
          <Box>
            <Button type="submit" variant="outlined" loading={change.isPending}>
              {t("preferences.details.change_password")}
            </Button>
          </Box>
        </Stack>
      </Box>
    </Section>
  );
}

function Newsletter({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const queryClient = useQueryClient();
  const [enabled, setEnabled] = useState(!user.has_disabled_newsletter);
  const save = useMutation({
    mutationFn: (on: boolean) =>
      sdk.pine.patch({ resource: "user", id: user.id, body: { has_disabled_newsletter: !on } as never }),
    onSuccess: async () => {
      showToast("success", t("preferences.details.newsletter_saved"));
      await queryClient.invalidateQueries({ queryKey: sessionKeys.state });
    },
    // A failed change goes back to what was stored (the error toast comes from the query client).
    onError: () => setEnabled(!user.has_disabled_newsletter),
  });
  return (
    <Section title={t("preferences.details.newsletter_title")}>
      <FormControlLabel
        control={
          <Switch
            checked={enabled}
            disabled={save.isPending}
            onChange={(event) => {
              setEnabled(event.target.checked);
              save.mutate(event.target.checked);
            }}
          />
        }
        label={t("preferences.details.newsletter")}
      />
    </Section>
  );
}

function Sessions() {
  const { t } = useTranslation();
  const api = useAccountApi();
  const withReauth = useReauth();
  const logoutOthers = useMutation({
    mutationFn: () => withReauth(() => api.logoutOthers()),
    meta: { reportErrors: false },
    onSuccess: () => showToast("success", t("preferences.details.logged_out_others")),
    onError: () => showToast("warning", t("errors.failed_logout_others")),
  });
  return (
    <Section
      title={t("preferences.details.sessions_title")}
      text={t("preferences.details.sessions_text")}
      actions={
        <Button variant="outlined" onClick={() => logoutOthers.mutate()} loading={logoutOthers.isPending}>
          {t("preferences.details.logout_others")}
        </Button>
      }
    >
      {null}
    </Section>
  );
}

type Progress = "pending" | "inprogress" | "done" | "failed";

function DeleteAccount({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  const { sdk, queryClient } = useServices();
  const api = useAccountApi();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState("");
  const [progress, setProgress] = useState<Progress>("pending");
  const [error, setError] = useState<string>();
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const remove = async () => {
    if (!password) {
      setError(t("login.password_required"));
      return;
    }
    setProgress("inprogress");
    setError(undefined);
    // Deletion order (spec 1 §4): verify the password first, then delete the user; the server
    // cancels the subscription and removes sole-admin organizations with it.
    try {
      await sdk.auth.loginWithToken(await api.refreshToken(password));
    } catch (failure) {
      setProgress("failed");
      const status = getStatusCode(failure);
      setError(status === 401 || status === 403 ? t("errors.invalid_password") : errorText(failure));
      return;
    }
    try {
      await sdk.pine.delete({ resource: "user", id: user.id });
    } catch (failure) {
      setProgress("failed");
      setError(`${errorText(failure)} ${t("errors.contact_support")}`);
      return;
    }
    setProgress("done");
    timer.current = setTimeout(async () => {
      await logOut(queryClient, sdk);
      await router.navigate({ to: "/login", search: {} });
    }, ACCOUNT_DELETION_REDIRECT_MS);
  };

  return (
    <Section
      danger
      title={t("preferences.details.delete_title")}
      text={t("preferences.details.delete_text")}
      actions={
        <Button variant="outlined" color="error" onClick={() => setOpen(true)}>
          {t("preferences.details.delete")}
        </Button>
      }
    >
      {null}
      <ConfirmDialog
        open={open}
        danger
        title={t("preferences.details.delete_confirm_title")}
        text={t("preferences.details.delete_confirm_text")}
        confirmLabel={t("preferences.details.delete")}
        busy={progress === "inprogress"}
        confirmDisabled={progress === "done"}
        error={error}
        onConfirm={() => void remove()}
        onClose={() => {
          if (progress === "inprogress" || progress === "done") return;
          setOpen(false);
          setPassword("");
          setError(undefined);
          setProgress("pending");
        }}
      >
        {progress === "done" ? (
          <Alert severity="success" role="status" sx={{ mb: 2 }}>
            {t("preferences.details.deleted")}
          </Alert>
        ) : null}
        <PasswordField
          label={t("preferences.details.current_password")}
          name="delete-password"
          autoComplete="current-password"
          autoFocus
          fullWidth
          value={password}
          disabled={progress === "done"}
          onChange={(event) => setPassword(event.target.value)}
        />
      </ConfirmDialog>
    </Section>
  );
}

/** `/preferences/details` (spec 1 §2.4). */
export function DetailsPreferencesPage() {
  const { t } = useTranslation();
  const user = useSessionUser();
  if (!user) return null;
  return (
    <Stack spacing={2.5}>
      <AccountSummary user={user} />
      <Section title={t("preferences.details.name_title")}>
        <ProfileForm
          user={user}
          submitLabel={t("preferences.details.save")}
          onSaved={() => showToast("success", t("preferences.details.saved"))}
        />
      </Section>
      <ChangeEmail />
      <ChangePassword />
      <Newsletter user={user} />
      <Sessions />
      <DeleteAccount user={user} />
    </Stack>
  );
}
