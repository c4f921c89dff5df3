import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useServices } from "../../app-services.tsx";
import { supportApi, supportKeys } from "./api.ts";
import { supportView } from "./model.ts";

/** The support calls, bound to this deployment's API. */
export function useSupportApi() {
  const { sdk, config } = useServices();
  return useMemo(() => supportApi(sdk, config.apiUrl), [sdk, config.apiUrl]);
}

/** What the private-support section shows for an organization (model.ts `supportView`). */
export function useSupportView(orgId: number | undefined) {
  const api = useSupportApi();
  const enabled = orgId !== undefined;
  const check = useQuery({
    queryKey: supportKeys.canAccess(orgId ?? 0),
    queryFn: () => api.canAccessSupport(orgId ?? 0),
    enabled,
    retry: false,
    meta: { handlesErrors: true },
  });
  const access = useQuery({
    queryKey: supportKeys.access(orgId ?? 0),
    queryFn: () => api.access(orgId ?? 0),
    enabled,
    retry: false,
    meta: { handlesErrors: true },
  });
  return {
    view: supportView(
      { data: check.data, error: check.error ?? undefined },
      { data: access.data, error: access.error ?? undefined },
    ),
    refetch: () => Promise.all([check.refetch(), access.refetch()]),
  };
}

export function useMyTickets(enabled = true) {
  const api = useSupportApi();
  return useQuery({
    queryKey: supportKeys.tickets,
    queryFn: () => api.tickets(),
    enabled,
    meta: { handlesErrors: true },
  });
}
