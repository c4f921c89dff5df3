import HomeOutlined from "@mui/icons-material/HomeOutlined";
import TravelExploreOutlined from "@mui/icons-material/TravelExploreOutlined";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { ButtonLink } from "./links.tsx";
import { StatusPage } from "./status-page.tsx";
import { useDocumentTitle } from "./use-document-title.ts";

/** Any unmatched path (spec 1 §2.1): a not-found page with a go-home button leading to `/`. */
export function NotFoundPage() {
  const { t } = useTranslation();
  useDocumentTitle(t("not_found.title"));
  return (
    <StatusPage
      tone="neutral"
      icon={<TravelExploreOutlined />}
      eyebrow={t("not_found.code")}
      title={t("not_found.title")}
      actions={
        <ButtonLink to="/" variant="contained" startIcon={<HomeOutlined />}>
          {t("not_found.go_home")}
        </ButtonLink>
      }
    >
      <Typography color="text.secondary">{t("not_found.text")}</Typography>
    </StatusPage>
  );
}
