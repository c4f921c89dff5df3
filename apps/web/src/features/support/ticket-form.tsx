import AttachFile from "@mui/icons-material/AttachFile";
import Close from "@mui/icons-material/Close";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import CircularProgress from "@mui/material/CircularProgress";
import FormControlLabel from "@mui/material/FormControlLabel";
import FormHelperText from "@mui/material/FormHelperText";
import IconButton from "@mui/material/IconButton";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type ChangeEvent, type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useOrganizations } from "../orgs/data.ts";
import { supportKeys, type TicketField, type UploadedAttachment } from "./api.ts";
import { supportDrawer, useSupportDrawer } from "./drawer-state.ts";
import { useSupportApi } from "./hooks.ts";
import {
  attachmentLimitText,
  attachmentTooLarge,
  fieldKey,
  fileSize,
  formFields,
  initialValues,
  supportErrorText,
  type TicketValues,
  ticketBody,
  validateTicket,
} from "./model.ts";

type Attachment = { key: string; name: string } & (
  | { state: "uploading" }
  | { state: "uploaded"; token: string; attachment: UploadedAttachment }
  | { state: "failed"; error: string }
);

/**
 * The create-ticket form (spec 3 §2, §3, §5, §7): its fields come from ticket-fields; the cc field
 * takes comma-separated e-mails; each attachment is uploaded as it is picked (over 5 MB: refused
 * here with the spec's text); the submit's answer is not shown, only that the ticket was created.
 */
export function TicketForm() {
  const { t } = useTranslation();
  const api = useSupportApi();
  const organizations = useOrganizations();
  const { orgId: picked } = useSupportDrawer();
  const org = organizations.data?.find((entry) => entry.id === picked) ?? organizations.data?.[0];
  const orgId = org?.id ?? 0;
  const fields = useQuery({
    queryKey: supportKeys.fields(orgId),
    queryFn: () => api.ticketFields(orgId),
    enabled: org !== undefined,
    retry: false,
    meta: { handlesErrors: true },
  });
  if (fields.isError) {
    return (
      <Alert
        severity="error"
        action={
          <Button color="inherit" size="small" onClick={() => supportDrawer.show({ name: "home" })}>
            {t("support.form.go_back")}
          </Button>
        }
      >
        {t("support.form.fields_failed")}
      </Alert>
    );
  }
  if (!fields.data || !org) return <CircularProgress size={24} aria-label={t("app.loading")} />;
  return <LoadedForm orgId={org.id} orgName={org.name} fields={fields.data} />;
}

function LoadedForm({ orgId, orgName, fields }: { orgId: number; orgName: string; fields: TicketField[] }) {
  const { t } = useTranslation();
  const api = useSupportApi();
  const queryClient = useQueryClient();
  const [values, setValues] = useState<TicketValues>(() => initialValues(fields));
  const [cc, setCc] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const shown = formFields(fields);

  const update = (key: string, value: string | boolean) => {
    setValues((current) => ({ ...current, [key]: value }));
    setErrors(({ [key]: _dropped, ...rest }) => rest);
  };

  const patchAttachment = (key: string, next: Attachment) =>
    setAttachments((current) => current.map((entry) => (entry.key === key ? next : entry)));

  const pick = (event: ChangeEvent<HTMLInputElement>) => {
    const files = [...(event.target.files ?? [])];
    event.target.value = "";
    for (const file of files) {
      const key = `${file.name}-${Date.now()}-${Math.random()}`;
      if (attachmentTooLarge(file)) {
        setAttachments((current) => [
          ...current,
          { key, name: file.name, state: "failed", error: attachmentLimitText() },
        ]);
        continue;
      }
      setAttachments((current) => [...current, { key, name: file.name, state: "uploading" }]);
      api.uploadAttachment(orgId, file).then(
        ({ upload }) => patchAttachment(key, { key, name: file.name, state: "uploaded", ...upload }),
        (error: unknown) =>
          patchAttachment(key, { key, name: file.name, state: "failed", error: supportErrorText(error) }),
      );
    }
  };

  const submit = useMutation({
    mutationFn: () => {
      const uploads = attachments.flatMap((entry) => (entry.state === "uploaded" ? [entry.token] : []));
      return api.submitTicket(orgId, ticketBody(fields, values, cc, uploads));
    },
    meta: { reportErrors: false },
    onSuccess: async () => {
      const subject = ticketBody(fields, values, cc, []).subject;
      await queryClient.invalidateQueries({ queryKey: supportKeys.tickets });
      // The answer is not shown (spec 3 §7): a plain success message, the ticket in "Your tickets".
      supportDrawer.created({ id: 0, subject });
    },
  });

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateTicket(fields, values, cc);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    submit.mutate();
  };

  const uploading = attachments.some((entry) => entry.state === "uploading");
  return (
    <Box component="form" noValidate onSubmit={onSubmit} aria-label={t("support.form.title")}>
      <Typography sx={{ fontSize: 13, color: "text.secondary", mb: 2 }}>
        {t("support.form.for_organization", { organization: orgName })}
      </Typography>
      {shown.map((field) => (
        <FieldInput
          key={field.id}
          field={field}
          value={values[fieldKey(field)] ?? ""}
          error={errors[fieldKey(field)]}
          onChange={(value) => update(fieldKey(field), value)}
        />
      ))}
      <TextField
        size="small"
        fullWidth
        label={t("support.form.cc")}
        type="email"
        value={cc}
        onChange={(event) => {
          setCc(event.target.value);
          setErrors(({ cc: _dropped, ...rest }) => rest);
        }}
        error={errors.cc !== undefined}
        helperText={errors.cc ?? t("support.form.cc_help")}
        sx={{ mb: 2 }}
      />
      <Box sx={{ mb: 2 }}>
        <Button component="label" size="small" variant="outlined" startIcon={<AttachFile />}>
          {t("support.form.attach")}
          <input type="file" multiple hidden onChange={pick} />
        </Button>
        <FormHelperText>{t("support.form.attachments_help")}</FormHelperText>
        {attachments.length > 0 ? (
          <Box component="ul" aria-label={t("support.form.attachments")} sx={{ listStyle: "none", p: 0, m: 0, mt: 1 }}>
            {attachments.map((entry) => (
              <Box
                component="li"
                key={entry.key}
                sx={{ display: "flex", alignItems: "flex-start", gap: 0.5, fontSize: 13, py: 0.25 }}
              >
                <Box sx={{ flex: 1, minWidth: 0 }}>
                  <Box sx={{ overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" }}>
                    {entry.name}
                    {entry.state === "uploaded" ? (
                      <Box component="span" sx={{ color: "text.secondary" }}>
                        {` · ${fileSize(entry.attachment.size)}`}
                      </Box>
                    ) : null}
                  </Box>
                  {entry.state === "failed" ? (
                    <Box role="alert" sx={{ color: "error.main", fontSize: 12 }}>
                      {entry.error}
                    </Box>
                  ) : null}
                </Box>
                {entry.state === "uploading" ? (
                  <CircularProgress size={16} aria-label={t("support.form.uploading", { name: entry.name })} />
                ) : (
                  <IconButton
                    size="small"
                    aria-label={t("support.form.remove_attachment", { name: entry.name })}
                    onClick={() => setAttachments((current) => current.filter((other) => other.key !== entry.key))}
                    sx={{ p: 0.25 }}
                  >
                    <Close sx={{ fontSize: 16 }} />
                  </IconButton>
                )}
              </Box>
            ))}
          </Box>
        ) : null}
      </Box>
      {submit.isError ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          {supportErrorText(submit.error)}
        </Alert>
      ) : null}
      <Box sx={{ display: "flex", gap: 1, justifyContent: "flex-end" }}>
        <Button onClick={() => supportDrawer.show({ name: "home" })}>{t("support.form.cancel")}</Button>
        <Button type="submit" variant="contained" loading={submit.isPending} disabled={uploading}>
          {t("support.form.submit")}
        </Button>
      </Box>
    </Box>
  );
}

/** One field of the form, by its Zendesk type (spec 3 §3). A blank required field: error, no text. */
function FieldInput({
  field,
  value,
  error,
  onChange,
}: {
  field: TicketField;
  value: string | boolean;
  error: string | undefined;
  onChange: (value: string | boolean) => void;
}) {
  const { t } = useTranslation();
  const required = field.required_in_portal || field.type === "subject" || field.type === "description";
  const common = {
    size: "small" as const,
    fullWidth: true,
    label: field.title_in_portal,
    required,
    error: error !== undefined,
    helperText: error || field.description || undefined,
    sx: { mb: 2 },
  };
  if (field.type === "checkbox") {
    return (
      <Box sx={{ mb: 2 }}>
        <FormControlLabel
          control={<Checkbox checked={value === true} onChange={(event) => onChange(event.target.checked)} />}
          label={`${field.title_in_portal}${required ? " *" : ""}`}
          sx={error !== undefined ? { color: "error.main" } : undefined}
        />
        {error ? <FormHelperText error>{error}</FormHelperText> : null}
      </Box>
    );
  }
  if (field.type === "tagger" || field.type === "priority") {
    return (
      <TextField select {...common} value={String(value)} onChange={(event) => onChange(event.target.value)}>
        {field.type === "tagger" && !required ? (
          <MenuItem value="">
            <em>{t("support.form.select_none")}</em>
          </MenuItem>
        ) : null}
        {(field.options ?? []).map((option) => (
          <MenuItem key={option.value} value={option.value}>
            {field.type === "priority" ? t(`support.priority.${option.value as "low"}`, option.name) : option.name}
          </MenuItem>
        ))}
      </TextField>
    );
  }
  const multiline = field.type === "description" || field.type === "textarea";
  return (
    <TextField
      {...common}
      multiline={multiline}
      minRows={multiline ? 4 : undefined}
      type={field.type === "date" ? "date" : "text"}
      slotProps={{
        ...(field.type === "date" ? { inputLabel: { shrink: true } } : {}),
        ...(field.type === "integer" ? { htmlInput: { inputMode: "numeric" } } : {}),
      }}
      value={String(value)}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}
