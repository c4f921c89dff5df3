import AppsOutlined from "@mui/icons-material/AppsOutlined";
import { useTranslation } from "react-i18next";
import { EmptyState, PageHeader } from "../../components/page.tsx";

export function AppsPage() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader title={t("pages.apps.title")} description={t("pages.apps.description")} />
      <EmptyState icon={<AppsOutlined />} title={t("pages.apps.empty_title")} text={t("pages.apps.empty_text")} />
    </>
  );
}
