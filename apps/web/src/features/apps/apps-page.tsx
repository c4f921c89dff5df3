import { ApplicationListPage } from "../fleets/list-page.tsx";

/** `/apps` (spec 2 §1, §2): only reachable from menus when the apps display option is on. */
export function AppsPage() {
  return <ApplicationListPage kind="app" />;
}
