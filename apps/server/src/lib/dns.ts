import { Resolver } from "node:dns/promises";

/** One try's deadline and the tries of a lookup: a silent DNS server costs at most ~8 s. */
const TIMEOUT_MS = 4_000;
const TRIES = 2;

/** The TXT records of a name, each record's strings joined (a long record comes in 255-byte parts). */
export type TxtLookup = (name: string) => Promise<string[]>;

/**
 * TXT look-ups through node's dns Resolver, asking `servers` (FLOTILLA_DNS_SERVERS) or the
 * system's resolvers. A new Resolver per look-up: nothing is cached between checks, so a record
 * published a minute after a failed check is found by the next one.
 */
export function createTxtLookup(servers: string[] | undefined): TxtLookup {
  return async (name) => {
    const resolver = new Resolver({ timeout: TIMEOUT_MS, tries: TRIES });
    if (servers) resolver.setServers(servers);
    const records = await resolver.resolveTxt(name);
    return records.map((chunks) => chunks.join(""));
  };
}

/** A look-up's failure: the domain has no such record (a final answer) or DNS did not answer (try later). */
export function dnsFailureKind(error: unknown): "no_record" | "no_domain" | "unavailable" {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ENODATA") return "no_record";
  if (code === "ENOTFOUND") return "no_domain";
  return "unavailable";
}
