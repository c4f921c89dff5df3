import { createRoute } from "@tanstack/react-router";
import { page } from "../../route-kit.ts";
import { orgPermissionGuard } from "../orgs/route-guards.ts";
import type { OrgRoute } from "../orgs/routes.tsx";

/** `/orgs/{orgId}/webhooks`: the organization's webhooks and their delivery logs, for its administrators. */
export const orgWebhooksRoute = (org: OrgRoute) =>
  createRoute({
    getParentRoute: () => org,
    path: "webhooks",
    staticData: { crumb: "nav.webhooks" },
    beforeLoad: orgPermissionGuard("manage_webhooks"),
    component: page(() => import("./webhooks-page.tsx"), "WebhooksPage"),
  });
