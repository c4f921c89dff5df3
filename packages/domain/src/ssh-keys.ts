/** SSH public keys (spec 1 §5, decision 4): type, then base64, then an optional comment. */
export const SSH_KEY_TYPES = [
  "ssh-rsa",
  "ssh-dss",
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
] as const;

const SSH_KEY = new RegExp(`^(${SSH_KEY_TYPES.join("|")}) [A-Za-z0-9+/]+={0,3}( [^\\r\\n]*)?$`);

export const isSshPublicKey = (key: string) => SSH_KEY.test(key.trim());
