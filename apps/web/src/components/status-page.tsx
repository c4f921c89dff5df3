import Box from "@mui/material/Box";
import Stack from "@mui/material/Stack";
import { alpha } from "@mui/material/styles";
import Typography from "@mui/material/Typography";
import type { ReactNode } from "react";
import { useInFrame } from "./frame-context.ts";
import { Wordmark } from "./logo.tsx";

/** The frame of the whole-page states (not found, error): centred, calm, one clear way forward. */
export function StatusPage(props: {
  icon: ReactNode;
  tone: "neutral" | "error";
  eyebrow?: ReactNode;
  title: string;
  children?: ReactNode;
  actions: ReactNode;
}) {
  const inFrame = useInFrame();
  return (
    <Box
      sx={{
        position: "relative",
        minHeight: "100%",
        display: "flex",
        alignItems: "center",
        justifyContent: "center",
        px: 3,
        py: 6,
      }}
    >
      {inFrame ? null : (
        <Box sx={{ position: "absolute", top: 16, left: 24 }}>
          <a
            href="/"
            aria-label="Flotilla"
            style={{ color: "inherit", textDecoration: "none", display: "inline-flex" }}
          >
            <Wordmark size={24} />
          </a>
        </Box>
      )}
      <Stack spacing={2} sx={{ maxWidth: 520, width: "100%", alignItems: "flex-start" }}>
        <Box
          aria-hidden
          sx={(theme) => ({
            width: 48,
            height: 48,
            borderRadius: "12px",
            display: "grid",
            placeItems: "center",
            color: props.tone === "error" ? theme.palette.error.main : theme.palette.primary.main,
            bgcolor: alpha(props.tone === "error" ? theme.palette.error.main : theme.palette.primary.main, 0.12),
            "& svg": { fontSize: 28 },
          })}
        >
          {props.icon}
        </Box>
        {props.eyebrow ? (
          <Typography variant="overline" color="text.secondary" sx={{ lineHeight: 1 }}>
            {props.eyebrow}
          </Typography>
        ) : null}
        <Typography variant="h1" component="h1">
          {props.title}
        </Typography>
        {props.children}
        <Stack direction="row" spacing={1} sx={{ pt: 1 }}>
          {props.actions}
        </Stack>
      </Stack>
    </Box>
  );
}
