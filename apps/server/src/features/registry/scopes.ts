import { FlotillaError } from "../../errors.ts";

/** One requested or granted access of the Docker token protocol (`repository:NAME:pull,push`). */
export type Access = { type: string; name: string; actions: string[] };

const MAX_SCOPES = 20;
const MAX_SCOPE_LENGTH = 512;
/** The distribution spec's repository name grammar (lower-case path components). */
const REPOSITORY_NAME = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const ACTION = /^[a-z*]+$/;

/** Reads the `scope` query parameters (several allowed, each `type:name:actions`); bad ones are a 400. */
export function parseScopes(raw: unknown): Access[] {
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (values.length > MAX_SCOPES)
    throw new FlotillaError("bad_request", `scope: at most ${MAX_SCOPES} scopes per request`);
  const scopes: Access[] = [];
  for (const value of values) {
    // Clients may send several scopes space-separated in one parameter (the OAuth2 form).
    for (const scope of typeof value === "string" ? value.split(" ").filter(Boolean) : [value]) {
      if (typeof scope !== "string" || scope.length > MAX_SCOPE_LENGTH) throw invalid(String(scope).slice(0, 80));
      const first = scope.indexOf(":");
      const last = scope.lastIndexOf(":");
      if (first <= 0 || last === first) throw invalid(scope);
      const type = scope.slice(0, first);
      const name = scope.slice(first + 1, last);
      const actions = scope.slice(last + 1).split(",");
      if (!name || !actions.every((action) => ACTION.test(action))) throw invalid(scope);
      // Resource types with a class (`repository(plugin)`) name the same repositories.
      const baseType = type.replace(/\([a-z0-9]+\)$/, "");
      if (baseType === "repository" && !REPOSITORY_NAME.test(name)) throw invalid(scope);
      scopes.push({ type: baseType, name, actions: [...new Set(actions)] });
    }
  }
  return scopes;
}

const invalid = (scope: string) =>
  new FlotillaError("bad_request", `scope: ${JSON.stringify(scope)} is not of the form repository:NAME:pull[,push]`);
