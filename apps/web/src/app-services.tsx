import type { QueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useContext, useSyncExternalStore } from "react";
import type { BuildFreshness } from "./lib/build-freshness.ts";
import type { RuntimeConfig } from "./lib/config.ts";
import type { ConnectivityMonitor } from "./lib/connectivity.ts";
import type { FeatureFlags } from "./lib/feature-flags.ts";
import type { Sdk } from "./lib/sdk.ts";
import type { StatusPageMonitor, StatusPageState } from "./lib/status-page.ts";

/** What the whole app shares, created once at start-up (main.tsx → app.tsx). */
export interface AppServices {
  config: RuntimeConfig;
  sdk: Sdk;
  queryClient: QueryClient;
  connectivity: ConnectivityMonitor;
  buildFreshness: BuildFreshness;
  /** The experiments read at boot (defaults when the fetch failed or timed out). */
  featureFlags: FeatureFlags;
  statusPage: StatusPageMonitor;
}

const ServicesContext = createContext<AppServices | null>(null);

export function ServicesProvider({ services, children }: { services: AppServices; children: ReactNode }) {
  return <ServicesContext value={services}>{children}</ServicesContext>;
}

export function useServices(): AppServices {
  const services = useContext(ServicesContext);
  if (!services) throw new Error("useServices must be used inside <ServicesProvider>");
  return services;
}

export const useSdk = () => useServices().sdk;

export function useConnectivity() {
  const { connectivity } = useServices();
  const state = useSyncExternalStore(connectivity.subscribe, connectivity.getState);
  return { ...state, checkNow: connectivity.checkNow };
}

export function useBuildOutdated(): boolean {
  const { buildFreshness } = useServices();
  return useSyncExternalStore(buildFreshness.subscribe, buildFreshness.isOutdated);
}

export const useFeatureFlags = () => useServices().featureFlags;

/** The status page: whether there is one, where it is, and its latest summary. */
export function useStatusPage(): StatusPageState & {
  configured: boolean;
  pageUrl: string | undefined;
  dismiss: () => void;
} {
  const { statusPage } = useServices();
  const state = useSyncExternalStore(statusPage.subscribe, statusPage.getState);
  return { ...state, configured: statusPage.configured, pageUrl: statusPage.pageUrl(), dismiss: statusPage.dismiss };
}
