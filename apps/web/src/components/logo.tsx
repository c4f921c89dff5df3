import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";

/** The Flotilla mark: a sail on an indigo tile. */
export function LogoMark({ size = 24 }: { size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" fill="#4f46e5" />
      <path d="M7 20.5 16 8l9 12.5h-7.2V24h-3.6v-3.5z" fill="#fff" />
    </svg>
  );
}

export function Wordmark({ size = 24, color }: { size?: number; color?: string }) {
  return (
    <Box sx={{ display: "inline-flex", alignItems: "center", gap: 1, color }}>
      <LogoMark size={size} />
      <Typography
        component="span"
        sx={{ fontWeight: 700, fontSize: size * 0.68, letterSpacing: "-0.01em", color: "inherit" }}
      >
        Flotilla
      </Typography>
    </Box>
  );
}
