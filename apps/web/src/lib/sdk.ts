import { APP_VERSION } from "@flotilla/domain";
import type { BalenaSDK } from "balena-sdk";
import { createSend, notLoggedIn, storedToken, TOKEN_STORAGE_KEY } from "./api-client.ts";
import { withChunkTimeout } from "./chunk.ts";
import type { RuntimeConfig } from "./config.ts";
import { type Connectivity, createRequestLayer } from "./request-layer.ts";
import { noteThrottled } from "./throttle-notice.ts";

export type Sdk = BalenaSDK;

/**
 * How the dashboard identifies itself (spec 1 §9: app version 31.1.1). It rides on the header
 * the SDK already sends to the API and CORS allows: `X-Balena-Client: balena-sdk/23.x flotilla-dashboard/31.1.1`.
 */
export const CLIENT_ID = `flotilla-dashboard/${APP_VERSION}`;

export function withClientId(header: string | undefined): string {
  if (!header) return CLIENT_ID;
  return header.includes(CLIENT_ID) ? header : `${header} ${CLIENT_ID}`;
}

export { TOKEN_STORAGE_KEY };

type Call = (...args: unknown[]) => Promise<unknown>;

/**
 * A stand-in for an SDK object: any property is another stand-in, and calling one loads the SDK
 * (once), then calls the real method at that path with the same arguments. Every SDK method the
 * dashboard calls returns a promise, so callers see no difference. Not a thenable.
 */
function lazyNode(load: () => Promise<Sdk>, path: readonly string[], cache: Map<string, unknown>): unknown {
  const id = path.join(".");
  const cached = cache.get(id);
  if (cached) return cached;
  const call: Call = async (...args) => {
    const root = (await load()) as unknown as Record<string, unknown>;
    let parent: Record<string, unknown> = root;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
    const method = parent[path[path.length - 1] ?? ""];
    if (typeof method !== "function") throw new TypeError(`balena-sdk has no method ${id}`);
    return (method as Call).apply(parent, args);
  };
  const node = new Proxy(call, {
    get(_target, key) {
      if (typeof key === "symbol" || key === "then") return undefined;
      return lazyNode(load, [...path, key], cache);
    },
  });
  cache.set(id, node);
  return node;
}

/**
 * The one balena-sdk of the page, talking to the API named by `/config.json`. The SDK itself
 * (lib/sdk-impl.ts) is a separate chunk loaded by the first call that needs it: the login page
 * and the route guards only read the stored token, which needs no SDK (issue 17: the login
 * page loaded 412 KB of gzipped JavaScript, half of it the SDK).
 *
 * The session token lives in localStorage (key `balena-token`), so it survives reloads and is
 * shared by the tabs. Every request goes through the request layer: ≤ 350 in flight, 429
 * retried, GETs held while offline.
 */
export function createSdk(config: RuntimeConfig, connectivity: Connectivity): Sdk {
  let ready = false;
  const load = retryingOnce(() =>
    withChunkTimeout(import("./sdk-impl.ts")).then((module) => {
      ready = true;
      return module.createBalenaSdk(config, connectivity);
    }),
  );
  const root = lazyNode(load, [], new Map()) as Sdk;
  // The token, read and dropped as the SDK's own storage does, without loading the SDK.
  const getToken = async (): Promise<string> => {
    if (ready) return (await load()).auth.getToken();
    const token = storedToken();
    if (!token) throw notLoggedIn();
    return token;
  };
  const logout = async (): Promise<void> => {
    if (ready) return (await load()).auth.logout();
    globalThis.localStorage?.removeItem(TOKEN_STORAGE_KEY);
  };
  // pine and request.send are the dashboard's own (lib/api-client.ts): most pages need nothing else.
  const send = createRequestLayer(createSend(CLIENT_ID), { connectivity, onRateLimited: noteThrottled });
  // pinejs-client-core in a chunk of its own: the login page needs no pine.
  const loadPine = retryingOnce(() =>
    withChunkTimeout(import("./pine.ts")).then(
      (module) => ({ pine: module.createPine(config.apiUrl, send) }) as unknown as Sdk,
    ),
  );
  return withOverrides(root, {
    auth: withOverrides(lazyNode(load, ["auth"], new Map()), { getToken, logout }),
    pine: lazyNode(loadPine, ["pine"], new Map()),
    request: withOverrides(lazyNode(load, ["request"], new Map()), { send }),
  }) as Sdk;
}

/** A loader run once; a failed load (network, timeout) is tried again by the next call. */
function retryingOnce<T>(loader: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= loader();
    loaded.catch(() => {
      loaded = undefined;
    });
    return loaded;
  };
}

/** A stand-in whose named properties are the given values instead. */
function withOverrides(node: unknown, overrides: Record<string, unknown>): unknown {
  return new Proxy(node as object, {
    get(target, key, receiver) {
      return typeof key === "string" && key in overrides ? overrides[key] : Reflect.get(target, key, receiver);
    },
  });
}
