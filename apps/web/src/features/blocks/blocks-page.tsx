import ViewInArOutlined from "@mui/icons-material/ViewInArOutlined";
import { useTranslation } from "react-i18next";
import { EmptyState, PageHeader } from "../../components/page.tsx";

export function BlocksPage() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader title={t("pages.blocks.title")} description={t("pages.blocks.description")} />
      <EmptyState
        icon={<ViewInArOutlined />}
        title={t("pages.blocks.empty_title")}
        text={t("pages.blocks.empty_text")}
      />
    </>
  );
}
