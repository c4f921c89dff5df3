/** The SHA256 fingerprint of an SSH public key, as `ssh-keygen -l` prints it ("SHA256:…", no padding). */
export async function sshFingerprint(publicKey: string): Promise<string | undefined> {
  const base64 = publicKey.trim().split(/\s+/)[1];
  if (!base64) return undefined;
  try {
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return `SHA256:${btoa(String.fromCharCode(...digest)).replace(/=+$/, "")}`;
  } catch {
    return undefined;
  }
}
