import { createRoute } from "@tanstack/react-router";
import { page } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";
import { deploySearch } from "./deploy.ts";

/** `/deploy` (spec 2 §2): deploy with a button; reads tarballUrl, repoUrl, configUrl, defaultDeviceType. */
export const deployRoute = (verified: VerifiedRoute) =>
  createRoute({
    getParentRoute: () => verified,
    path: "/deploy",
    staticData: { crumb: "nav.deploy" },
    validateSearch: deploySearch,
    component: page(() => import("./deploy-page.tsx"), "DeployPage"),
  });
