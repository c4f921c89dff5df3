import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/** What the test provider says about one of its users. */
export type OidcAccount = { sub: string; email?: string; email_verified?: boolean; name?: string };

export type TestOidcIdp = Awaited<ReturnType<typeof startOidcIdp>>;

/**
 * A real OpenID Connect provider (oidc-provider) on 127.0.0.1 with one confidential client.
 * Its development interactions (a login form that takes any account id, then a consent form)
 * are driven with fetch by `signIn`, which follows a browser through them with its cookies
 * and returns where the provider finally sends the browser (the client's redirect URI).
 */
export async function startOidcIdp(options: { clientId: string; clientSecret: string; redirectUris: string[] }) {
  const accounts = new Map<string, OidcAccount>();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    cookies: { keys: ["test-cookie-key-0123456789abcdef"] },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ ...account }) };
    },
  });
  server.on("request", provider.callback());

  /** Cookies of the one test browser, by name. */
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === "") jar.delete(name);
      else jar.set(name, value);
    }
  };
  const go = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() },
    });
    keep(response);
    await response.arrayBuffer();
    return response;
  };

  return {
    issuer,
    provider,
    /** Adds (or replaces) an account of the provider. */
    account(account: OidcAccount) {
      accounts.set(account.sub, account);
    },
    /**
     * Follows the authorization URL through login (as `sub`) and consent; returns the final
     * redirect to the client (with code, state and iss), or the provider's error redirect.
     */
    async signIn(authorizationUrl: string, sub: string): Promise<URL> {
      jar.clear();
      let url = authorizationUrl;
      for (let step = 0; step < 10; step++) {
        const response = await go(url);
        const location = response.headers.get("location");
        if (!location) throw new Error(`provider stopped at ${url} with ${response.status}`);
        const next = new URL(location, url);
        if (!next.href.startsWith(issuer)) return next;
        const interaction = next.pathname.match(/^\/interaction\/([^/]+)$/);
        if (interaction) {
          const details = await provider.Interaction.find(interaction[1] ?? "");
          const prompt = details?.prompt.name;
          const body: Record<string, string> =
            prompt === "login" ? { prompt, login: sub, password: "x" } : { prompt: "consent" };
          const submitted = await go(next.href, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams(body).toString(),
          });
          url = new URL(submitted.headers.get("location") ?? "", next).href;
        } else {
          url = next.href;
        }
      }
      throw new Error("too many redirects at the provider");
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
