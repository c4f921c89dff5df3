import ImageOutlined from "@mui/icons-material/ImageOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Typography from "@mui/material/Typography";
import { type ChangeEvent, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { FormDialog } from "../../components/form-dialog.tsx";
import { fileToDataUrl } from "../../lib/data-url.ts";
import { LOGO_MAX_BYTES, logoProblem } from "./logo.tsx";
import { NameField, useSubmission } from "./ui.tsx";

/**
 * "Create organization" (spec 3 §7: POST organization with name and, optionally, logo_image): the
 * name is required; a logo (PNG or JPEG, at most 1,000,000 bytes) goes along as a data URL of its
 * type, name and base64 content (spec 1 §5). The server's refusal shows in the dialog.
 */
export function CreateOrganizationDialog(props: {
  open: boolean;
  onClose: () => void;
  onSubmit: (body: { name: string; logo_image?: string }) => Promise<unknown>;
}) {
  const { t } = useTranslation();
  const [name, setName] = useState("");
  const [logo, setLogo] = useState<File>();
  const [logoError, setLogoError] = useState<string>();
  const [touched, setTouched] = useState(false);
  const { error, setError, busy, run } = useSubmission();
  const fileInput = useRef<HTMLInputElement>(null);
  const preview = usePreview(logo);
  const missing = name.trim() === "";

  const reset = () => {
    setName("");
    setLogo(undefined);
    setLogoError(undefined);
    setTouched(false);
    setError(undefined);
  };
  const close = () => {
    reset();
    props.onClose();
  };
  const choose = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (!file) return;
    const problem = logoProblem(file);
    setLogoError(problem ? t(`orgs.${problem}`) : undefined);
    setLogo(problem ? undefined : file);
  };
  const submit = async () => {
    setTouched(true);
    if (missing) return;
    await run(async () => {
      await props.onSubmit({ name: name.trim(), ...(logo ? { logo_image: await fileToDataUrl(logo) } : {}) });
      close();
    });
  };

  return (
    <FormDialog
      open={props.open}
      onClose={close}
      title={t("orgs.create_title")}
      error={error}
      submitLabel={t("orgs.create")}
      busy={busy}
      onSubmit={submit}
    >
      <NameField label={t("orgs.name")} value={name} onChange={setName} touched={touched} />
      <Box sx={{ display: "flex", alignItems: "center", gap: 1.5, mt: 2 }}>
        <Box
          sx={{
            width: 48,
            height: 48,
            borderRadius: 1,
            border: 1,
            borderColor: "divider",
            display: "grid",
            placeItems: "center",
            overflow: "hidden",
            flex: "none",
            color: "text.disabled",
            bgcolor: "background.default",
          }}
        >
          {preview ? (
            <Box
              component="img"
              src={preview}
              alt={t("orgs.logo_preview")}
              sx={{ width: 1, height: 1, objectFit: "cover" }}
            />
          ) : (
            <ImageOutlined />
          )}
        </Box>
        <Box sx={{ minWidth: 0, flex: 1 }}>
          <Typography variant="body2" noWrap>
            {logo ? logo.name : t("orgs.logo_optional")}
          </Typography>
          <Typography variant="caption" color="text.secondary">
            {t("orgs.logo_hint", { max: LOGO_MAX_BYTES.toLocaleString("en-US") })}
          </Typography>
        </Box>
        <input
          ref={fileInput}
          type="file"
          accept="image/png,image/jpeg"
          hidden
          aria-label={t("orgs.logo_file")}
          onChange={choose}
        />
        {logo ? (
          <Button size="small" onClick={() => setLogo(undefined)}>
            {t("orgs.remove_logo")}
          </Button>
        ) : (
          <Button size="small" variant="outlined" onClick={() => fileInput.current?.click()}>
            {t("orgs.choose_logo")}
          </Button>
        )}
      </Box>
      {logoError ? (
        <Typography role="alert" color="error" variant="body2" sx={{ mt: 1 }}>
          {logoError}
        </Typography>
      ) : null}
    </FormDialog>
  );
}

/** An object URL of the chosen file while it is shown. */
function usePreview(file: File | undefined): string | undefined {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    if (!file) {
      setUrl(undefined);
      return;
    }
    const next = URL.createObjectURL(file);
    setUrl(next);
    return () => URL.revokeObjectURL(next);
  }, [file]);
  return url;
}
