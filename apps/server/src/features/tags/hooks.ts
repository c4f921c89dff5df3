import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/** Namespaces balena keeps for itself (its supervisor's and dashboard's own tags). */
const RESERVED_TAG_PREFIXES = ["io.resin.", "io.balena."];

/** Longest tag key, per resource (balena: 100, and 164 for release tags). */
const MAX_TAG_KEY_LENGTH: Record<string, number> = { release_tag: 164 };

/** balena's rule and words for a tag key: no whitespace, not in a reserved namespace. */
export function tagKeyProblem(key: string, maxLength = 100): string | undefined {
  if (key.length === 0 || key.length > maxLength) return `Tag keys must be 1 to ${maxLength} characters long.`;
  if (/\s/.test(key)) return "Tag keys cannot contain whitespace.";
  const reserved = RESERVED_TAG_PREFIXES.find((prefix) => key.startsWith(prefix));
  return reserved ? `Tag keys beginning with ${reserved} are reserved.` : undefined;
}

/** Checks `tag_key` on every write of a tag resource (device, fleet, release and organization-membership tags). */
export function tagKeyHooks(resource: string): ResourceHooks {
  const check = ({ body }: { body: Record<string, unknown> }) => {
    if (body.tag_key === undefined) return;
    if (typeof body.tag_key !== "string") throw new FlotillaError("bad_request", "tag_key must be a string");
    const problem = tagKeyProblem(body.tag_key, MAX_TAG_KEY_LENGTH[resource]);
    if (problem) throw new FlotillaError("bad_request", problem);
  };
  return {
    beforeCreate: check,
    beforeCreateMany: ({ bodies }) => {
      for (const body of bodies) check({ body });
    },
    beforeUpdate: check,
  };
}
