import type { QueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useContext, useSyncExternalStore } from "react";
import type { BuildFreshness } from "./lib/build-freshness.ts";
import type { RuntimeConfig } from "./lib/config.ts";
import type { ConnectivityMonitor } from "./lib/connectivity.ts";
import type { Sdk } from "./lib/sdk.ts";

/** What the whole app shares, created once at start-up (main.tsx → app.tsx). */
export interface AppServices {
  config: RuntimeConfig;
  sdk: Sdk;
  queryClient: QueryClient;
  connectivity: ConnectivityMonitor;
  buildFreshness: BuildFreshness;
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
