/** OAuth applications (spec 1 §2.1 `/login/oauth/{clientId}`, §7; docs/identity.md "OAuth applications"). */
export interface OAuthApplication {
  id: number;
  client_id: string;
  name: string;
  description: string | null;
  redirect_uri: string;
}

/** The host the browser is sent to (the whole URI when it cannot be read). */
export function redirectHost(uri: string): string {
  try {
    return new URL(uri).host || uri;
  } catch {
    return uri;
  }
}

/**
 * Where "Deny" sends the browser: the application's registered redirect URI with
 * `error=access_denied` (and the state it sent), as RFC 6749 §4.1.2.1 has it, so the application
 * learns the answer and the user is back where they came from. Nothing is granted.
 */
export function deniedRedirect(redirectUri: string, state: string | undefined): string {
  const url = new URL(redirectUri);
  url.searchParams.set("error", "access_denied");
  if (state !== undefined) url.searchParams.set("state", state);
  return url.toString();
}
