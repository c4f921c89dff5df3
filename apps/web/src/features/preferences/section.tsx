import Box from "@mui/material/Box";
import Paper from "@mui/material/Paper";
import Typography from "@mui/material/Typography";
import type { ReactNode } from "react";

/** One titled block of a preferences page. */
export function Section(props: {
  title: string;
  text?: string;
  children: ReactNode;
  danger?: boolean;
  actions?: ReactNode;
}) {
  return (
    <Paper
      variant="outlined"
      component="section"
      aria-label={props.title}
      sx={{ p: 3, borderColor: props.danger ? "error.light" : "divider" }}
    >
      <Box sx={{ display: "flex", alignItems: "flex-start", gap: 2, mb: props.children ? 2 : 0 }}>
        <Box sx={{ flex: 1, minWidth: 0 }}>
          <Typography
            variant="h6"
            component="h2"
            sx={{ fontSize: "1rem", color: props.danger ? "error.main" : undefined }}
          >
            {props.title}
          </Typography>
          {props.text ? (
            <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
              {props.text}
            </Typography>
          ) : null}
        </Box>
        {props.actions}
      </Box>
      {props.children}
    </Paper>
  );
}
