import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import IconButton from "@mui/material/IconButton";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { errorText } from "../lib/errors.ts";
import { showToast } from "../lib/toasts.ts";
import { useSubmission } from "./settings.tsx";

export type Tag = { tag_key: string; value: string };
export type TagRow = { key: string; value: string };
type TagText = "manage" | "key" | "value" | "add" | "remove" | "save" | "saved" | "key_required" | "key_unique";

/**
 * Manage the tags of a device or a release (spec 2 §2): add, edit and remove rows, then save them
 * at once. Keys must be present and unique; `save` writes the rows and throws what went wrong.
 */
export function TagsDialog(props: {
  /** The catalogue section with the dialog's texts (manage, key, value, add, remove, save, saved, key_*). */
  texts: "devices.tags" | "releases.tags";
  tags: Tag[];
  /** Whether a saved tag may be removed (a new row always may). */
  canRemove?: boolean;
  save(rows: TagRow[]): Promise<void>;
  /** The text of a failed save (default: the common error texts). */
  describeError?: (error: unknown) => string;
  onClose(): void;
}) {
  const { t } = useTranslation();
  const text = (key: TagText, options: { key?: string } = {}) => t(`${props.texts}.${key}`, options);
  const [rows, setRows] = useState<TagRow[]>(props.tags.map((tag) => ({ key: tag.tag_key, value: tag.value })));
  const { error, setError, busy, run } = useSubmission();
  const existing = new Set(props.tags.map((tag) => tag.tag_key));
  const change = (index: number, patch: Partial<TagRow>) =>
    setRows(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));

  const save = async () => {
    const keys = rows.map((row) => row.key.trim());
    if (keys.some((key) => key === "")) return setError(text("key_required"));
    if (new Set(keys).size !== keys.length) return setError(text("key_unique"));
    await run(async () => {
      try {
        await props.save(rows.map((row) => ({ key: row.key.trim(), value: row.value })));
      } catch (caught) {
        setError((props.describeError ?? errorText)(caught));
        return;
      }
      showToast("success", text("saved"));
      props.onClose();
    });
  };

  return (
    <Dialog open onClose={props.onClose} maxWidth="sm" fullWidth>
      <DialogTitle>{text("manage")}</DialogTitle>
      <DialogContent>
        {error ? (
          <Alert severity="error" sx={{ mb: 2 }}>
            {error}
          </Alert>
        ) : null}
        <Stack spacing={1.5} sx={{ pt: 1 }}>
          {rows.map((row, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity until saved
            <Box key={index} sx={{ display: "flex", gap: 1, alignItems: "center" }}>
              <TextField
                size="small"
                label={text("key")}
                value={row.key}
                onChange={(event) => change(index, { key: event.target.value })}
                sx={{ flex: 1 }}
              />
              <TextField
                size="small"
                label={text("value")}
                value={row.value}
                onChange={(event) => change(index, { value: event.target.value })}
                sx={{ flex: 1 }}
              />
              <IconButton
                aria-label={text("remove", { key: row.key })}
                disabled={props.canRemove === false && existing.has(row.key.trim())}
                onClick={() => setRows(rows.filter((_row, i) => i !== index))}
              >
                <DeleteOutlined fontSize="small" />
              </IconButton>
            </Box>
          ))}
          <Box>
            <Button size="small" onClick={() => setRows([...rows, { key: "", value: "" }])}>
              {text("add")}
            </Button>
          </Box>
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>{t("confirm.cancel")}</Button>
        <Button variant="contained" loading={busy} onClick={() => void save()}>
          {text("save")}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
