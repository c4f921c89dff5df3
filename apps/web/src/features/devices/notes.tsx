import HelpOutlineOutlined from "@mui/icons-material/HelpOutlineOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import IconButton from "@mui/material/IconButton";
import Tab from "@mui/material/Tab";
import Tabs from "@mui/material/Tabs";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import Markdown from "react-markdown";
import { useSdk } from "../../app-services.tsx";
import { errorText } from "../../lib/errors.ts";
import { MONO_FONT_STACK } from "../../theme.ts";

/** Note saves wait until typing has paused for 500 ms (spec 2 §2, §9). */
export const NOTE_SAVE_DEBOUNCE_MS = 500;

const HELP = [
  ["# Heading", "heading"],
  ["**bold**", "bold"],
  ["*italic*", "italic"],
  ["- item", "list"],
  ["1. item", "numbered"],
  ["[text](https://example.com)", "link"],
  ["`code`", "code"],
  ["> quote", "quote"],
] as const;

function HelpDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Dialog open onClose={onClose} maxWidth="xs" fullWidth>
      <DialogTitle>{t("devices.notes.help_title")}</DialogTitle>
      <DialogContent>
        <Box component="dl" sx={{ display: "grid", gridTemplateColumns: "1fr 1fr", rowGap: 1, columnGap: 2, m: 0 }}>
          {HELP.map(([syntax, key]) => (
            <Box key={key} sx={{ display: "contents" }}>
              <Typography component="dt" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13 }}>
                {syntax}
              </Typography>
              <Typography component="dd" variant="body2" sx={{ m: 0 }}>
                {t(`devices.notes.help.${key}`)}
              </Typography>
            </Box>
          ))}
        </Box>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t("devices.notes.close")}</Button>
      </DialogActions>
    </Dialog>
  );
}

/** Device notes in markdown: write or preview; saved 500 ms after typing stops. */
export function DeviceNotes(props: { uuid: string; note: string | null; editable: boolean }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const [tab, setTab] = useState<"write" | "preview">(props.editable ? "write" : "preview");
  const [text, setText] = useState(props.note ?? "");
  const [state, setState] = useState<"saved" | "saving" | "idle" | { error: string }>("idle");
  const [help, setHelp] = useState(false);
  const saved = useRef(props.note ?? "");
  // A refetch brings the stored note; what the user is typing (not yet saved) wins.
  const stored = props.note ?? "";
  const [seen, setSeen] = useState(stored);
  if (stored !== seen) {
    setSeen(stored);
    if (text === saved.current) {
      saved.current = stored;
      setText(stored);
    }
  }
  useEffect(() => {
    if (text === saved.current) return;
    const timer = setTimeout(async () => {
      setState("saving");
      try {
        await sdk.models.device.setNote(props.uuid, text);
        saved.current = text;
        setState("saved");
        await queryClient.invalidateQueries({ queryKey: ["device", props.uuid] });
      } catch (caught) {
        setState({ error: errorText(caught) });
      }
    }, NOTE_SAVE_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text, props.uuid, sdk, queryClient]);
  const status =
    state === "saving"
      ? t("devices.notes.saving")
      : state === "saved"
        ? t("devices.notes.saved")
        : typeof state === "object"
          ? state.error
          : "";
  return (
    <Box>
      <Box sx={{ display: "flex", alignItems: "center", borderBottom: 1, borderColor: "divider", mb: 1 }}>
        <Tabs value={tab} onChange={(_event, next) => setTab(next)} sx={{ minHeight: 36, flex: 1 }}>
          {props.editable ? <Tab value="write" label={t("devices.notes.write")} sx={{ minHeight: 36 }} /> : null}
          <Tab value="preview" label={t("devices.notes.preview")} sx={{ minHeight: 36 }} />
        </Tabs>
        <Typography
          variant="caption"
          role="status"
          color={typeof state === "object" ? "error" : "text.secondary"}
          sx={{ mr: 1 }}
        >
          {status}
        </Typography>
        <Tooltip title={t("devices.notes.help_title")}>
          <IconButton size="small" aria-label={t("devices.notes.help_title")} onClick={() => setHelp(true)}>
            <HelpOutlineOutlined fontSize="small" />
          </IconButton>
        </Tooltip>
      </Box>
      {tab === "write" ? (
        <TextField
          multiline
          fullWidth
          minRows={4}
          maxRows={14}
          label={t("devices.notes.label")}
          value={text}
          onChange={(event) => setText(event.target.value)}
          slotProps={{ htmlInput: { spellCheck: true } }}
        />
      ) : (
        <Box
          data-testid="device-notes-preview"
          sx={{
            minHeight: 80,
            typography: "body2",
            "& p": { my: 0.75 },
            "& code": { fontFamily: MONO_FONT_STACK, fontSize: 12.5 },
            "& h1, & h2, & h3": { fontSize: 16, my: 1 },
          }}
        >
          {text.trim() ? (
            <Markdown>{text}</Markdown>
          ) : (
            <Typography variant="body2" color="text.secondary">
              {t("devices.notes.empty")}
            </Typography>
          )}
        </Box>
      )}
      {help ? <HelpDialog onClose={() => setHelp(false)} /> : null}
    </Box>
  );
}
