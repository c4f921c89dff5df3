import { ApplicationListPage } from "../fleets/list-page.tsx";

/** `/blocks` (spec 2 §2). */
export function BlocksPage() {
  return <ApplicationListPage kind="block" />;
}
