import { getRouteApi } from "@tanstack/react-router";
import { useEffect, useRef } from "react";
import { useServices } from "../../app-services.tsx";
import { usePreference } from "../../lib/use-preference.ts";
import { renderLoginPage } from "./login-page.ts";

const loginRoute = getRouteApi("/login");

/** The router's /login: the plain login page (login-page.ts), the one a cold load opens, mounted here. */
export function LoginPage() {
  const search = loginRoute.useSearch();
  const { config } = useServices();
  const [colorMode] = usePreference("colorMode");
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current) return;
    return renderLoginPage(host.current, { apiUrl: config.apiUrl, search });
  }, [config.apiUrl, search]);
  return <div ref={host} className="fl-ui fl-auth-host" data-color-mode={colorMode} />;
}
