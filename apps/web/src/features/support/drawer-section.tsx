import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";
import type { ReactNode } from "react";

/** A titled part of the support drawer (private support, status, community, resources). */
export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Box component="section" aria-label={title} sx={{ mb: 2.5 }}>
      <Typography
        component="h3"
        sx={{
          fontSize: 12,
          fontWeight: 600,
          textTransform: "uppercase",
          letterSpacing: 0.5,
          color: "text.secondary",
          mb: 1,
        }}
      >
        {title}
      </Typography>
      {children}
    </Box>
  );
}
