import CorporateFareOutlined from "@mui/icons-material/CorporateFareOutlined";
import { useTranslation } from "react-i18next";
import { EmptyState, PageHeader } from "../../components/page.tsx";

export function OrgsPage() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader title={t("pages.orgs.title")} description={t("pages.orgs.description")} />
      <EmptyState
        icon={<CorporateFareOutlined />}
        title={t("pages.orgs.empty_title")}
        text={t("pages.orgs.empty_text")}
      />
    </>
  );
}
