import { parseReleasePolicy } from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/** A fleet's release policy is checked on every write and stored with its defaults filled in. */
function checkPolicy({ body }: { body: Record<string, unknown> }) {
  if (body.policy === undefined) return;
  const parsed = parseReleasePolicy(body.policy);
  if ("problem" in parsed) throw new FlotillaError("bad_request", parsed.problem);
  body.policy = parsed.policy;
}

export const releasePolicyHooks: ResourceHooks = {
  beforeCreate: checkPolicy,
  beforeUpdate: checkPolicy,
};
