import NavigateNext from "@mui/icons-material/NavigateNext";
import Breadcrumbs from "@mui/material/Breadcrumbs";
import Typography from "@mui/material/Typography";
import { useMatches } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { TextLink } from "./links.tsx";

/** Home > Fleets > …, from the `crumb` of each matched route (spec 1 §2.5). */
export function AppBreadcrumbs() {
  const { t } = useTranslation();
  const crumbs = useMatches({
    select: (matches) =>
      matches.flatMap((match) =>
        match.staticData.crumb ? [{ label: match.staticData.crumb, path: match.pathname }] : [],
      ),
  });
  return (
    <Breadcrumbs
      aria-label={t("nav.breadcrumbs")}
      separator={<NavigateNext sx={{ fontSize: 16 }} />}
      sx={{ mb: 1, fontSize: "0.8125rem", "& .MuiBreadcrumbs-separator": { mx: 0.5, color: "text.disabled" } }}
    >
      <TextLink to="/" underline="hover" color="text.secondary">
        {t("nav.home")}
      </TextLink>
      {crumbs.map((crumb, index) =>
        index === crumbs.length - 1 ? (
          <Typography
            key={crumb.path}
            aria-current="page"
            sx={{ fontSize: "inherit", color: "text.primary", fontWeight: 500 }}
          >
            {t(crumb.label)}
          </Typography>
        ) : (
          <TextLink key={crumb.path} to={crumb.path} underline="hover" color="text.secondary">
            {t(crumb.label)}
          </TextLink>
        ),
      )}
    </Breadcrumbs>
  );
}
