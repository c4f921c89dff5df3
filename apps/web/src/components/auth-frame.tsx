import { APP_VERSION } from "@flotilla/domain";
import CheckCircleOutlineOutlined from "@mui/icons-material/CheckCircleOutlineOutlined";
import Box from "@mui/material/Box";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { headerColors } from "../theme.ts";
import { Wordmark } from "./logo.tsx";
import { useDocumentTitle } from "./use-document-title.ts";

/**
 * The frame of the signed-out pages (login, sign-up, two-factor, password reset): the product's
 * promise on the left (wide screens), one focused form on the right.
 */
export function AuthFrame(props: {
  pageTitle: string;
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}) {
  const { t } = useTranslation();
  useDocumentTitle(props.pageTitle);
  return (
    <Box sx={{ minHeight: "100%", display: "flex", bgcolor: "background.default" }}>
      <Box
        sx={{
          display: { xs: "none", md: "flex" },
          flexDirection: "column",
          justifyContent: "space-between",
          width: "42%",
          maxWidth: 560,
          p: 5,
          color: headerColors.text,
          bgcolor: headerColors.background,
          backgroundImage:
            "radial-gradient(90% 70% at 100% 100%, rgba(129,140,248,0.28) 0%, rgba(129,140,248,0) 70%), linear-gradient(160deg, #1f1d4d 0%, #151a23 55%, #151a23 100%)",
        }}
      >
        <Wordmark size={28} color={headerColors.text} />
        <Box>
          <Typography
            component="p"
            sx={{ fontSize: "1.75rem", fontWeight: 650, lineHeight: 1.25, mb: 3, maxWidth: 380 }}
          >
            {t("login.side_title")}
          </Typography>
          <Stack component="ul" spacing={1.5} sx={{ listStyle: "none", p: 0, m: 0 }}>
            {(["watch", "release", "team"] as const).map((point) => (
              <Box component="li" key={point} sx={{ display: "flex", gap: 1.5, alignItems: "flex-start" }}>
                <CheckCircleOutlineOutlined sx={{ fontSize: 20, color: "#a5b4fc", mt: "1px" }} />
                <Typography sx={{ color: headerColors.text, fontSize: "0.9375rem" }}>
                  {t(`login.side_points.${point}`)}
                </Typography>
              </Box>
            ))}
          </Stack>
        </Box>
        <Typography variant="body2" sx={{ color: headerColors.muted }}>
          {t("app.tagline")} · {t("app.version", { version: APP_VERSION })}
        </Typography>
      </Box>

      <Box sx={{ flex: 1, display: "flex", alignItems: "center", justifyContent: "center", px: 3, py: 6 }}>
        <Box sx={{ width: "100%", maxWidth: 400 }}>
          <Box sx={{ display: { xs: "block", md: "none" }, mb: 4 }}>
            <Wordmark size={28} />
          </Box>
          <Box component="header" sx={{ mb: 3 }}>
            <Typography variant="h1" component="h1" sx={{ fontSize: "1.625rem" }}>
              {props.title}
            </Typography>
            {props.subtitle ? (
              <Typography component="div" color="text.secondary" sx={{ mt: 0.75, fontSize: "0.9375rem" }}>
                {props.subtitle}
              </Typography>
            ) : null}
          </Box>
          {props.children}
          {props.footer ? (
            <Typography component="div" variant="body2" color="text.secondary" sx={{ mt: 3, textAlign: "center" }}>
              {props.footer}
            </Typography>
          ) : null}
        </Box>
      </Box>
    </Box>
  );
}

/** A centred card for the signed-in pages without the side menu (verify email, profile completion). */
export function FocusCard(props: { pageTitle: string; title: string; icon?: ReactNode; children: ReactNode }) {
  useDocumentTitle(props.pageTitle);
  return (
    <Box sx={{ display: "flex", justifyContent: "center", px: 2, py: { xs: 4, md: 8 } }}>
      <Box
        sx={{
          width: "100%",
          maxWidth: 520,
          bgcolor: "background.paper",
          border: 1,
          borderColor: "divider",
          borderRadius: 2,
          p: { xs: 3, sm: 4 },
        }}
      >
        {props.icon ? (
          <Box
            aria-hidden
            sx={{
              width: 48,
              height: 48,
              borderRadius: "50%",
              display: "grid",
              placeItems: "center",
              bgcolor: "action.hover",
              color: "primary.main",
              mb: 2,
            }}
          >
            {props.icon}
          </Box>
        ) : null}
        <Typography variant="h5" component="h1" sx={{ mb: 1 }}>
          {props.title}
        </Typography>
        {props.children}
      </Box>
    </Box>
  );
}
