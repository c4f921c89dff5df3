import { APP_VERSION } from "@flotilla/domain";
import CssBaseline from "@mui/material/CssBaseline";
import { ThemeProvider } from "@mui/material/styles";
import { QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { StrictMode, useMemo } from "react";
import { createRoot } from "react-dom/client";
import { I18nextProvider, initReactI18next } from "react-i18next";
import { type AppServices, ServicesProvider } from "./app-services.tsx";
import { AppErrorBoundary } from "./components/error-page.tsx";
import { ReauthProvider } from "./features/auth/reauth.tsx";
import { checkSessionState, logOut } from "./features/auth/session.ts";
import { startTokenWatch } from "./features/auth/token-watch.ts";
import { createBuildFreshness } from "./lib/build-freshness.ts";
import type { RuntimeConfig } from "./lib/config.ts";
import { createApiPing, createConnectivityMonitor } from "./lib/connectivity.ts";
import { DEFAULT_FEATURE_FLAGS, type FeatureFlags } from "./lib/feature-flags.ts";
import { i18n, t } from "./lib/i18n.ts";
import { setPreferenceDefaults } from "./lib/preferences.ts";
import { createQueryClient, type SessionLostText, sessionLostText } from "./lib/query-client.ts";
import { createSdk } from "./lib/sdk.ts";
import { createStatusPageMonitor } from "./lib/status-page.ts";
import { reportError, showToast } from "./lib/toasts.ts";
import { usePreference } from "./lib/use-preference.ts";
import { type AppRouter, createAppRouter } from "./router.tsx";
import { createAppTheme } from "./theme.ts";

function App({ services, router }: { services: AppServices; router: AppRouter }) {
  const [colorMode] = usePreference("colorMode");
  const theme = useMemo(() => createAppTheme(colorMode), [colorMode]);
  return (
    <ThemeProvider theme={theme}>
      <CssBaseline enableColorScheme />
      <I18nextProvider i18n={i18n}>
        <ServicesProvider services={services}>
          <QueryClientProvider client={services.queryClient}>
            <AppErrorBoundary>
              <ReauthProvider>
                <RouterProvider router={router} />
              </ReauthProvider>
            </AppErrorBoundary>
          </QueryClientProvider>
        </ServicesProvider>
      </I18nextProvider>
    </ThemeProvider>
  );
}

/**
 * Creates the page's services and renders the app into `container` (called by main.tsx's
 * bootstrap, with the feature flags it fetched meanwhile and the outcome of the stored data's migration).
 */
export async function startApp(
  container: HTMLElement,
  config: RuntimeConfig,
  featureFlags: FeatureFlags = DEFAULT_FEATURE_FLAGS,
  options: { storageMigrationFailed?: boolean } = {},
): Promise<void> {
  // react-i18next's hooks use the one instance (lib/i18n.ts stays free of React for the login page).
  initReactI18next.init(i18n);
  // main.tsx migrated the stored data first; a failure is told, not fatal.
  if (options.storageMigrationFailed) showToast("warning", t("errors.storage_migration_failed"));
  setPreferenceDefaults({ displayApps: featureFlags.displayApps });

  const connectivity = createConnectivityMonitor({ ping: createApiPing(config.apiUrl) });
  const sdk = createSdk(config, connectivity);
  const buildFreshness = createBuildFreshness({ currentBuildId: __FLOTILLA_BUILD_ID__ });
  const statusPage = createStatusPageMonitor({ summaryUrl: config.statusPageUrl });

  let router: AppRouter | undefined;
  let leaving = false;
  /**
   * A data load found the session gone (expired or revoked token, ended session): log out and back
   * to /login with the spec's text, so that lists do not just turn empty (spec 1 §8).
   */
  const onSessionLost = async (text: SessionLostText) => {
    if (!router || leaving || router.state.location.pathname === "/login") return;
    const signedInPage = router.state.matches.some((match) => match.routeId.startsWith("/signed-in"));
    if (!signedInPage) return;
    leaving = true;
    showToast("error", t(text));
    const here = router.state.location.href;
    try {
      await logOut(queryClient, sdk);
      await router.navigate({ to: "/login", search: { redirect: here } });
    } finally {
      leaving = false;
    }
  };
  const queryClient = createQueryClient({
    onAuthError: (error) => void onSessionLost(sessionLostText(error)),
    onAuthCheck: () =>
      void checkSessionState(sdk)
        .then((state) => (state.kind === "signed-out" ? onSessionLost("errors.session_expired") : undefined))
        .catch(() => undefined),
    onMutationError: reportError,
    onQueryCheckFailed: reportError,
    onQueryError: reportError,
  });
  router = createAppRouter({ sdk, queryClient });

  const services: AppServices = { config, sdk, queryClient, connectivity, buildFreshness, featureFlags, statusPage };
  document.documentElement.dataset.appVersion = APP_VERSION;
  container.replaceChildren();
  createRoot(container).render(
    <StrictMode>
      <App services={services} router={router} />
    </StrictMode>,
  );
  // The token is checked every second: expired → logged out with the spec's text; hourly refresh (spec 1 §9).
  startTokenWatch({
    sdk,
    apiUrl: config.apiUrl,
    onExpired: () => {
      const signedInPage = router?.state.matches.some((match) => match.routeId.startsWith("/signed-in"));
      if (!signedInPage) {
        // A stale token on a public page (login, sign-up): forget it quietly.
        void logOut(queryClient, sdk);
        return;
      }
      void onSessionLost("errors.token_expired");
    },
  });
  connectivity.start();
  buildFreshness.start();
  statusPage.start();
}
