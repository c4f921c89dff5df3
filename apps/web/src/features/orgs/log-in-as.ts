import { useQuery } from "@tanstack/react-query";
import { useCallback } from "react";
import { useServices } from "../../app-services.tsx";
import { reportError } from "../../lib/toasts.ts";
import { sessionQuery } from "../auth/session.ts";
import { isAdmin } from "../auth/token.ts";

/** A platform administrator's own session (not an impersonated one: the server refuses those). */
export function useIsPlatformAdmin(): boolean {
  const { sdk } = useServices();
  const session = useQuery(sessionQuery(sdk));
  return (
    session.data?.kind === "signed-in" && isAdmin(session.data.claims) && session.data.claims.actualUser === undefined
  );
}

/**
 * "Log in as user" (spec 3 §6, §7): `PATCH /login_ {username}` answers a token of that user
 * carrying `actualUser`; the dashboard signs in with it and reloads the page.
 */
export function useLogInAs(): (username: string) => Promise<void> {
  const { sdk, config } = useServices();
  return useCallback(
    async (username: string) => {
      try {
        const response = await sdk.request.send({
          method: "PATCH",
          url: "/login_",
          baseUrl: config.apiUrl,
          body: { username },
        });
        const token = typeof response.body === "string" ? response.body : String(response.body);
        await sdk.auth.loginWithToken(token.trim());
        window.location.reload();
      } catch (error) {
        reportError(error);
      }
    },
    [sdk, config.apiUrl],
  );
}
