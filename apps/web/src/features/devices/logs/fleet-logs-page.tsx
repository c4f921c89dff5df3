import { useParams } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { PageHeader } from "../../../components/page.tsx";
import { LogSearchCard } from "./log-search.tsx";

/**
 * `/fleets/{id}/logs`: search the stored logs of every device of the fleet (docs/logs.md). The
 * page has its title and shows the newest lines at once; each line links to its device.
 */
export function FleetLogsPage() {
  const { t } = useTranslation();
  const { fleetId } = useParams({ strict: false }) as { fleetId: string };
  const id = Number(fleetId);
  return (
    <>
      <PageHeader title={t("log_search.fleet_title")} description={t("log_search.fleet_description")} />
      <LogSearchCard scope={{ fleet: id }} fleetId={id} searchOnOpen />
    </>
  );
}
