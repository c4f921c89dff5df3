import type { BalenaSDK } from "balena-sdk";
import { currentLogin, readConfig, writeConfig } from "./config.ts";
import { CliError } from "./errors.ts";

type Env = Record<string, string | undefined>;

/** A balena-sdk for `apiUrl`, keeping its token in memory (the CLI's config file is ours). */
export async function createSdk(apiUrl: string): Promise<BalenaSDK> {
  // Loaded on demand: `flotilla --help` stays quick.
  const { getSdk } = await import("balena-sdk");
  return getSdk({ apiUrl, dataDirectory: false, isBrowser: false });
}

export interface Session {
  sdk: BalenaSDK;
  apiUrl: string;
  token: string;
  /** Keeps a token the SDK refreshed during the command, so the next command starts from it. */
  save(): Promise<void>;
}

/** The SDK signed in with the saved (or `FLOTILLA_TOKEN`) login; "Not logged in" otherwise. */
export async function openSession(env: Env): Promise<Session> {
  const login = currentLogin(env);
  if (!login) throw new CliError("Not logged in: run flotilla login");
  const sdk = await createSdk(login.apiUrl);
  await sdk.auth.loginWithToken(login.token);
  return {
    sdk,
    apiUrl: login.apiUrl,
    token: login.token,
    async save() {
      if (login.fromEnv) return;
      const token = await sdk.auth.getToken().catch(() => undefined);
      const saved = readConfig(env);
      if (token && token !== login.token && saved?.apiUrl === login.apiUrl) writeConfig(env, { ...saved, token });
    },
  };
}

export interface Fleet {
  id: number;
  app_name: string;
  slug: string;
}

/**
 * A fleet named as `organization/fleet` (its slug), a numeric id, or a bare fleet name when only
 * one fleet the user has access to has it (not the public OS catalogue fleets everyone can read).
 * balena-sdk `models.application.get` answers the first two.
 */
export async function resolveFleet(sdk: BalenaSDK, reference: string): Promise<Fleet> {
  const $select = ["id", "app_name", "slug"] as const;
  if (/^\d+$/.test(reference)) {
    return (await sdk.models.application.get(Number(reference), { $select: [...$select] })) as Fleet;
  }
  if (reference.includes("/")) {
    return (await sdk.models.application.get(reference, { $select: [...$select] })) as Fleet;
  }
  const found = (await sdk.models.application.getAllDirectlyAccessible({
    $select: [...$select],
    $filter: { app_name: reference },
    $orderby: { slug: "asc" },
  })) as Fleet[];
  const [first] = found;
  if (!first) throw new CliError(`Fleet not found: ${reference}`);
  if (found.length > 1) {
    throw new CliError(
      `${reference} names several fleets (${found.map((fleet) => fleet.slug).join(", ")}): name it as organization/fleet`,
    );
  }
  return first;
}
