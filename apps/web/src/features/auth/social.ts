import { apiErrorCode, errorText } from "../../lib/errors.ts";
import { t } from "../../lib/i18n.ts";
import { setReturnUrl } from "./navigation.ts";

/**
 * Social sign-in (spec 1 §2.1, §2.3, §7; docs/identity.md "Social sign-in"): the provider buttons
 * send the browser to `{api}/auth/{slug}?client_state=…`; the random client_state stays in this
 * tab's sessionStorage until the provider sends the browser back to `/auth/{slug}/callback`,
 * whose page hands it to the API with the provider's answer (a sign-in started in another
 * browser is refused: login CSRF).
 */
export interface SocialProvider {
  slug: string;
  name: string;
}

const CLIENT_STATE_KEY = "flotilla.socialClientState";
/** Where the flow was started from: the callback page names the page it returns to. */
export const SOCIAL_RETURN_KEY = "social";

export const socialProvidersKey = ["auth", "providers"] as const;

/** `GET {api}/auth/providers` (public): the configured providers; none, or a failure, is no buttons. */
export async function fetchSocialProviders(apiUrl: string, fetcher: typeof fetch = fetch): Promise<SocialProvider[]> {
  try {
    const response = await fetcher(`${apiUrl}/auth/providers`, { credentials: "omit" });
    if (!response.ok) return [];
    const body = (await response.json()) as unknown;
    if (!Array.isArray(body)) return [];
    return body.filter(
      (item): item is SocialProvider =>
        typeof item === "object" &&
        item !== null &&
        typeof (item as SocialProvider).slug === "string" &&
        typeof (item as SocialProvider).name === "string",
    );
  } catch {
    return [];
  }
}

export const socialProvidersQuery = (apiUrl: string) => ({
  queryKey: socialProvidersKey,
  queryFn: () => fetchSocialProviders(apiUrl),
  staleTime: 10 * 60_000,
  retry: false,
});

/** 32 random characters (base64url of 24 bytes): within the API's 16–200. */
export function newClientState(
  fill: (bytes: Uint8Array<ArrayBuffer>) => void = (b) => crypto.getRandomValues(b),
): string {
  const bytes = new Uint8Array(24);
  fill(bytes);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export const socialStartUrl = (apiUrl: string, slug: string, clientState: string) =>
  `${apiUrl}/auth/${encodeURIComponent(slug)}?${new URLSearchParams({ client_state: clientState })}`;

/** Keeps a new client_state (and where to return) and gives the URL of the provider button. */
export function prepareSocialSignIn(
  apiUrl: string,
  slug: string,
  returnTo?: string,
  storage: Storage | undefined = globalThis.sessionStorage,
): string {
  const clientState = newClientState();
  try {
    storage?.setItem(CLIENT_STATE_KEY, clientState);
  } catch {
    // Without sessionStorage the API refuses the callback (state mismatch) and says so.
  }
  if (returnTo) setReturnUrl(returnTo, SOCIAL_RETURN_KEY, storage);
  return socialStartUrl(apiUrl, slug, clientState);
}

/** The provider button: the browser leaves for the API, which sends it to the provider. */
export function startSocialSignIn(apiUrl: string, slug: string, returnTo?: string) {
  window.location.assign(prepareSocialSignIn(apiUrl, slug, returnTo));
}

/** The client_state kept by the button; read once (the flow it belongs to is spent). */
export function takeClientState(storage: Storage | undefined = globalThis.sessionStorage): string | undefined {
  try {
    const value = storage?.getItem(CLIENT_STATE_KEY) ?? undefined;
    storage?.removeItem(CLIENT_STATE_KEY);
    return value || undefined;
  } catch {
    return undefined;
  }
}

const SOCIAL_ERROR_KEYS = {
  social_provider_unknown: "errors.social_provider_unknown",
  social_provider_unavailable: "errors.social_provider_unavailable",
  social_login_failed: "errors.social_login_failed",
  social_login_expired: "errors.social_login_expired",
  social_state_mismatch: "errors.social_state_mismatch",
  social_email_required: "errors.social_email_required",
} as const;

/**
 * The words of a `social_error` query of the login page (spec 1 §8): the catalogue text of a
 * known code with the provider's name; any other code named in a general failure text.
 */
export function socialErrorText(code: string, provider: string): string {
  const key = SOCIAL_ERROR_KEYS[code as keyof typeof SOCIAL_ERROR_KEYS];
  if (key) return t(key, { provider });
  return t("errors.social_error_unknown", { provider, error: code.slice(0, 100) });
}

/** The query the API is given: the provider's, as it came, plus this tab's client_state. */
export function socialCallbackQuery(search: string, clientState: string | undefined): string {
  const params = new URLSearchParams(search);
  params.delete("client_state");
  if (clientState) params.set("client_state", clientState);
  return params.toString();
}

/**
 * The words of a failed callback: the API's own text for the social sign-in codes (it names the
 * provider and, for the account errors, the email: packages/domain errors.ts), else the usual.
 */
export function socialCallbackErrorText(error: unknown): string {
  const code = apiErrorCode(error);
  const body = (error as { body?: unknown } | null)?.body;
  if (code?.startsWith("social_") && typeof body === "string" && body.trim()) return body.trim();
  return errorText(error);
}
