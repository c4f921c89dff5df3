import { APP_VERSION } from "@flotilla/domain";
import { shouldShowChangelog } from "../../components/changelog.ts";
import { storedToken } from "../../lib/api-client.ts";
import type { RuntimeConfig } from "../../lib/config.ts";
import { getPreference } from "../../lib/preferences.ts";

/**
 * Whether a document load opens the plain login page (login-entry.ts) instead of the app: /login
 * with no stored session (a signed-in visitor is the app's: its guard sends them to /), and
 * nothing on the page that only the app shows: the toast of a failed storage migration, the
 * status page's banner (a deployment with a status page), the changelog that opens by itself.
 */
export function opensPlainLogin(
  location: Pick<Location, "pathname">,
  config: Pick<RuntimeConfig, "statusPageUrl">,
  storageMigrationFailed: boolean,
): boolean {
  return (
    location.pathname.replace(/\/+$/, "") === "/login" &&
    !storedToken() &&
    !storageMigrationFailed &&
    !config.statusPageUrl &&
    !shouldShowChangelog(getPreference("changelogVersion"), APP_VERSION)
  );
}
