import Box from "@mui/material/Box";
import Paper from "@mui/material/Paper";
import { alpha } from "@mui/material/styles";
import Typography from "@mui/material/Typography";
import type { ReactNode } from "react";
import { useDocumentTitle } from "./use-document-title.ts";

/** The title row of a page: heading, one line of explanation, and the page's actions on the right. */
export function PageHeader(props: { title: string; description?: string; actions?: ReactNode }) {
  useDocumentTitle(props.title);
  return (
    <Box sx={{ display: "flex", alignItems: "flex-end", gap: 2, mb: 3 }}>
      <Box sx={{ flex: 1, minWidth: 0 }}>
        <Typography variant="h4" component="h1">
          {props.title}
        </Typography>
        {props.description ? (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
            {props.description}
          </Typography>
        ) : null}
      </Box>
      {props.actions ? <Box sx={{ display: "flex", gap: 1 }}>{props.actions}</Box> : null}
    </Box>
  );
}

/** What a page shows when it has nothing to list, and what to do next when there is something to do. */
export function EmptyState(props: { icon: ReactNode; title: string; text: string; action?: ReactNode }) {
  return (
    <Paper
      variant="outlined"
      sx={{
        px: 3,
        py: 6,
        display: "flex",
        flexDirection: "column",
        alignItems: "center",
        textAlign: "center",
        gap: 1,
      }}
    >
      <Box
        aria-hidden
        sx={(theme) => ({
          width: 48,
          height: 48,
          mb: 1,
          borderRadius: "50%",
          display: "grid",
          placeItems: "center",
          color: "primary.main",
          bgcolor: alpha(theme.palette.primary.main, 0.1),
          "& svg": { fontSize: 26 },
        })}
      >
        {props.icon}
      </Box>
      <Typography variant="h6" component="h2">
        {props.title}
      </Typography>
      <Typography variant="body2" color="text.secondary" sx={{ maxWidth: 420 }}>
        {props.text}
      </Typography>
      {props.action ? <Box sx={{ mt: 2 }}>{props.action}</Box> : null}
    </Paper>
  );
}
