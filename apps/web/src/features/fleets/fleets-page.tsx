import DevicesOtherOutlined from "@mui/icons-material/DevicesOtherOutlined";
import { useTranslation } from "react-i18next";
import { EmptyState, PageHeader } from "../../components/page.tsx";

export function FleetsPage() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader title={t("pages.fleets.title")} description={t("pages.fleets.description")} />
      <EmptyState
        icon={<DevicesOtherOutlined />}
        title={t("pages.fleets.empty_title")}
        text={t("pages.fleets.empty_text")}
      />
    </>
  );
}
