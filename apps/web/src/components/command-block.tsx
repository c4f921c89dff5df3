import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import Box from "@mui/material/Box";
import IconButton from "@mui/material/IconButton";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { showToast } from "../lib/toasts.ts";
import { MONO_FONT_STACK } from "../theme.ts";

/** Shell commands to copy (add-device and add-release dialogs): monospace, with a copy button. */
export function CommandBlock(props: { lines: string[]; label: string; copyLabel: string; copiedText: string }) {
  const text = props.lines.join("\n");
  return (
    <Box
      sx={{
        position: "relative",
        border: 1,
        borderColor: "divider",
        borderRadius: 1,
        bgcolor: "action.hover",
        p: 1.5,
        pr: 6,
      }}
    >
      <Typography
        component="pre"
        aria-label={props.label}
        sx={{ m: 0, fontFamily: MONO_FONT_STACK, fontSize: 12.5, whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}
      >
        {text}
      </Typography>
      <Tooltip title={props.copyLabel}>
        <IconButton
          size="small"
          aria-label={props.copyLabel}
          sx={{ position: "absolute", top: 6, right: 6 }}
          onClick={() =>
            void navigator.clipboard?.writeText(text).then(
              () => showToast("success", props.copiedText),
              () => undefined,
            )
          }
        >
          <ContentCopyOutlined fontSize="small" />
        </IconButton>
      </Tooltip>
    </Box>
  );
}
