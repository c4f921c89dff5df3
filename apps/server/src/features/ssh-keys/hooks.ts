import { isSshPublicKey } from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/** SSH keys (balena-sdk `models.key`): a key must be a public key of an accepted type. */
export const sshKeyHooks: ResourceHooks = {
  beforeCreate({ body }) {
    if (typeof body.title !== "string" || body.title.trim() === "")
      throw new FlotillaError("bad_request", "A title is required");
    if (typeof body.public_key !== "string" || !isSshPublicKey(body.public_key)) {
      throw new FlotillaError(
        "bad_request",
        "The key must be an SSH public key: ssh-rsa, ssh-dss, ssh-ed25519 or ecdsa-sha2-nistp256/384/521, then the key, then an optional comment",
      );
    }
    body.public_key = body.public_key.trim();
  },
  beforeUpdate() {
    throw new FlotillaError("bad_request", "SSH keys cannot be changed: remove the key and add it again");
  },
};
