import { useQuery } from "@tanstack/react-query";
import { useSdk } from "../../app-services.tsx";
import { type SessionUser, sessionQuery } from "../auth/session.ts";

/** The signed-in user's row (the session query the guard already filled). */
export function useSessionUser(): SessionUser | undefined {
  const sdk = useSdk();
  const session = useQuery(sessionQuery(sdk));
  return session.data?.kind === "signed-in" ? session.data.user : undefined;
}
