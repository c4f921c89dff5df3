import { ApplicationListPage } from "./list-page.tsx";

/** `/fleets` (spec 2 §2). */
export function FleetsPage() {
  return <ApplicationListPage kind="fleet" />;
}
