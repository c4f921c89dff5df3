import { useMemo } from "react";
import { useServices } from "../app-services.tsx";
import { accountApi } from "../features/auth/api.ts";

/** The account endpoints without an SDK method, bound to this deployment's API. */
export function useAccountApi() {
  const { sdk, config } = useServices();
  return useMemo(() => accountApi(sdk, config.apiUrl), [sdk, config.apiUrl]);
}
