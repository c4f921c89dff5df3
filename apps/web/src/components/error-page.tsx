import ErrorOutlineOutlined from "@mui/icons-material/ErrorOutlineOutlined";
import Refresh from "@mui/icons-material/Refresh";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Typography from "@mui/material/Typography";
import { Component, type ErrorInfo, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { errorText, statusText } from "../lib/errors.ts";
import { MONO_FONT_STACK } from "../theme.ts";
import { StatusPage } from "./status-page.tsx";
import { useDocumentTitle } from "./use-document-title.ts";

/**
 * The error page (spec 1 §2.2): "something went wrong", the status text of the failure and a
 * refresh button that reloads the page. Works inside and outside the router.
 */
export function ErrorPage({ error }: { error: unknown }) {
  const { t } = useTranslation();
  useDocumentTitle(t("error_page.title"));
  const status = statusText(error);
  const detail = errorText(error);
  return (
    <StatusPage
      tone="error"
      icon={<ErrorOutlineOutlined />}
      title={t("error_page.title")}
      actions={
        <>
          <Button variant="contained" startIcon={<Refresh />} onClick={() => window.location.reload()}>
            {t("error_page.refresh")}
          </Button>
          <Button variant="text" href="/">
            {t("error_page.go_home")}
          </Button>
        </>
      }
    >
      <Typography color="text.secondary">{t("error_page.text")}</Typography>
      <Box
        sx={{
          width: "100%",
          border: 1,
          borderColor: "divider",
          borderRadius: 1,
          bgcolor: "background.paper",
          px: 2,
          py: 1.5,
        }}
      >
        <Typography variant="overline" component="p" color="text.secondary" sx={{ lineHeight: 1.6 }}>
          {t("error_page.status")}
        </Typography>
        <Typography
          data-testid="error-status"
          sx={{ fontFamily: MONO_FONT_STACK, fontSize: "0.875rem", wordBreak: "break-word" }}
        >
          {status}
        </Typography>
        {detail !== status ? (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5, wordBreak: "break-word" }}>
            {detail}
          </Typography>
        ) : null}
      </Box>
    </StatusPage>
  );
}

/** The root error boundary: anything that escapes the router still ends on the error page. */
export class AppErrorBoundary extends Component<{ children: ReactNode }, { error: unknown; failed: boolean }> {
  override state = { error: undefined as unknown, failed: false };

  static getDerivedStateFromError(error: unknown) {
    return { error, failed: true };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo) {
    console.error("Unhandled error in the dashboard", error, info.componentStack);
  }

  override render() {
    return this.state.failed ? <ErrorPage error={this.state.error} /> : this.props.children;
  }
}
