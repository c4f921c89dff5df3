import { alpha, createTheme, type Theme } from "@mui/material/styles";

/**
 * The one theme file (DESIGN §5): a calm, dense operations console. Light neutral background,
 * one accent colour (indigo), an 8 px spacing grid, the system font stack, light and dark palettes.
 */

export type ColorMode = "light" | "dark";

export const HEADER_HEIGHT = 48;
export const SIDEBAR_WIDTH = 220;
export const SIDEBAR_COLLAPSED_WIDTH = 56;

export const FONT_STACK =
  '-apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif, "Apple Color Emoji", "Segoe UI Emoji"';
/** Off screen but read by screen readers (and tests): the text copies of xterm terminals. */
export const visuallyHidden = {
  position: "absolute",
  // In px, as strings: MUI reads a bare 1 as 100 % (the terminal's hidden text copy was as wide
  // as the window, which widened the device page) and a margin of -1 as one spacing unit.
  width: "1px",
  height: "1px",
  p: 0,
  m: "-1px",
  overflow: "hidden",
  clip: "rect(0 0 0 0)",
  whiteSpace: "pre",
  border: 0,
} as const;

export const MONO_FONT_STACK = 'ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace';

/**
 * Status has one colour everywhere: chip, dot, map marker, count card (DESIGN §5), and each
 * status its own (spec 2 §4): operational green, updating blue, configuring amber,
 * post-provisioning cyan, reduced functionality orange, disconnected red, inactive grey.
 */
export const statusColors = {
  operational: "#16a34a",
  updating: "#2563eb",
  configuring: "#d97706",
  postProvisioning: "#0891b2",
  reducedFunctionality: "#ea580c",
  disconnected: "#dc2626",
  inactive: "#6b7280",
} as const;

export type StatusKind = keyof typeof statusColors;

/** The accent, and the header's colour (slate; admins will get red, spec 1 §2.5). */
const accent = { light: "#4f46e5", dark: "#818cf8" } as const;
export const headerColors = { background: "#151a23", text: "#e5e7eb", muted: "#9aa3b2" } as const;
/** The header of platform administrators (spec 1 §2.5). */
export const ADMIN_HEADER_COLOR = "#b91c1c";
/** The experimental header colours ("" = default slate); dark enough for the light header text. */
export const HEADER_COLOR_CHOICES = ["", "#1e3a8a", "#065f46", "#6b21a8", "#9a3412"] as const;

const palettes = {
  light: {
    background: { default: "#f4f5f7", paper: "#ffffff" },
    text: { primary: "#1b2230", secondary: "#5b6576", disabled: "#9aa3b2" },
    divider: "#e3e6eb",
  },
  dark: {
    background: { default: "#0f1218", paper: "#171b23" },
    text: { primary: "#e6e9ef", secondary: "#a3abb9", disabled: "#6b7385" },
    divider: "#2a303c",
  },
} as const;

export function createAppTheme(mode: ColorMode): Theme {
  const primary = accent[mode];
  const base = palettes[mode];
  return createTheme({
    palette: {
      mode,
      primary: { main: primary },
      success: { main: statusColors.operational },
      info: { main: statusColors.updating },
      // Dark text on amber: white on #d97706 is 3.2:1, below the 4.5:1 readable minimum.
      warning: { main: statusColors.configuring, contrastText: "#1f2937" },
      error: { main: statusColors.disconnected },
      background: base.background,
      text: base.text,
      divider: base.divider,
    },
    spacing: 8,
    shape: { borderRadius: 6 },
    typography: {
      fontFamily: FONT_STACK,
      fontSize: 14,
      h1: { fontSize: "1.75rem", fontWeight: 650, letterSpacing: "-0.01em" },
      h2: { fontSize: "1.5rem", fontWeight: 650, letterSpacing: "-0.01em" },
      h3: { fontSize: "1.25rem", fontWeight: 650 },
      h4: { fontSize: "1.375rem", fontWeight: 650, letterSpacing: "-0.01em" },
      h5: { fontSize: "1.125rem", fontWeight: 600 },
      h6: { fontSize: "1rem", fontWeight: 600 },
      subtitle1: { fontSize: "0.9375rem" },
      body1: { fontSize: "0.875rem" },
      body2: { fontSize: "0.8125rem" },
      button: { textTransform: "none", fontWeight: 600 },
      overline: { fontWeight: 600, letterSpacing: "0.08em" },
    },
    components: {
      MuiCssBaseline: {
        styleOverrides: {
          body: { WebkitFontSmoothing: "antialiased" },
          "code, kbd, pre": { fontFamily: MONO_FONT_STACK },
        },
      },
      MuiButton: {
        defaultProps: { disableElevation: true },
        styleOverrides: { root: { borderRadius: 6 } },
      },
      MuiButtonBase: { defaultProps: { disableRipple: false } },
      MuiPaper: { styleOverrides: { root: { backgroundImage: "none" } } },
      MuiCard: {
        defaultProps: { variant: "outlined" },
      },
      MuiAppBar: { defaultProps: { elevation: 0, color: "inherit" } },
      // A dialog's buttons end where its fields end (MUI's 8 px put them 16 px further out).
      MuiDialogActions: { styleOverrides: { root: { padding: "8px 24px 20px" } } },
      MuiTooltip: { defaultProps: { arrow: true } },
      MuiTextField: { defaultProps: { size: "small", fullWidth: true } },
      MuiMenu: {
        styleOverrides: {
          paper: ({ theme }) => ({
            border: `1px solid ${theme.palette.divider}`,
            boxShadow: `0 8px 24px ${alpha("#0b1220", mode === "light" ? 0.12 : 0.5)}`,
          }),
        },
      },
      MuiAlert: { styleOverrides: { root: { alignItems: "center" } } },
    },
  });
}
