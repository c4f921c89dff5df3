import { describe, expect, it } from "vitest";
import { sshFingerprint } from "./fingerprint.ts";

describe("sshFingerprint", () => {
  it("hashes the key's base64 part like ssh-keygen -l", async () => {
    // ssh-keygen -lf of this key prints SHA256:+0gPSdY2tSJU2jwhw3Dy95QJFlkC3uKYpcNRUnMuQDk
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ6QK+bMEW8rY+Wc9EPbUf6Dm4Ehh9ln8Tm2iOSNj3/0 ann@laptop";
    expect(await sshFingerprint(key)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(await sshFingerprint("ssh-ed25519")).toBeUndefined();
    expect(await sshFingerprint("ssh-ed25519 !!!")).toBeUndefined();
  });
});
