import { useParams } from "@tanstack/react-router";
import { LogSearchCard } from "./log-search.tsx";

/** `/fleets/{id}/logs`: search the stored logs of every device of the fleet (docs/logs.md). */
export function FleetLogsPage() {
  const { fleetId } = useParams({ strict: false }) as { fleetId: string };
  const id = Number(fleetId);
  return <LogSearchCard scope={{ fleet: id }} fleetId={id} />;
}
