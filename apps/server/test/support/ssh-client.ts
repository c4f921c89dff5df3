/**
 * Debian's OpenSSH client as balena-cli runs it (src/utils/ssh.ts there): one key, no user
 * configuration, no host-key prompts, never a password.
 */
export function sshClientArgs(port: number, key: string): string[] {
  return [
    "-F",
    "/dev/null",
    "-p",
    String(port),
    "-o",
    "LogLevel=ERROR",
    "-o",
    "StrictHostKeyChecking=no",
    "-o",
    "UserKnownHostsFile=/dev/null",
    "-o",
    "BatchMode=yes",
    "-o",
    "IdentitiesOnly=yes",
    "-i",
    key,
  ];
}
