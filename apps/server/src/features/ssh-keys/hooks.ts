import { isSshPublicKey } from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import { sensitiveActionError } from "../../lib/delegation.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/**
 * SSH keys (balena-sdk `models.key`): a key must be a public key of an accepted type. A key opens
 * a shell on the user's devices through the SSH gateway, so adding one is a sensitive action, as
 * creating an API key is: a sign-in of the last 20 minutes (else 403 `auth_expired`, and the
 * dashboard asks for the password), never an API key or an OAuth application's token
 * (lib/delegation.ts refuses the latter every write of SSH keys).
 */
export const sshKeyHooks: ResourceHooks = {
  beforeCreate({ body, authTime, delegated }) {
    if (typeof body.title !== "string" || body.title.trim() === "")
      throw new FlotillaError("bad_request", "A title is required");
    if (typeof body.public_key !== "string" || !isSshPublicKey(body.public_key)) {
      throw new FlotillaError(
        "bad_request",
        "The key must be an SSH public key: ssh-rsa, ssh-dss, ssh-ed25519 or ecdsa-sha2-nistp256/384/521, then the key, then an optional comment",
      );
    }
    body.public_key = body.public_key.trim();
    const error = sensitiveActionError({ authTime, delegated });
    if (error) throw error;
  },
  beforeUpdate() {
    throw new FlotillaError("bad_request", "SSH keys cannot be changed: remove the key and add it again");
  },
};
