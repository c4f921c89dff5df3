/**
 * The git commands an SSH client sends the gateway (docs/releases.md "Git push"): `git push` to
 * `{user}@{host}:{organization}/{fleet}.git` runs `git-receive-pack '{organization}/{fleet}.git'`
 * (with a leading `/` from an `ssh://` remote). The path is checked strictly here, as a fleet
 * slug and nothing else: the repository on disk is named by the server from the fleet's id, never
 * from this text. Fetching and cloning (`git-upload-pack`, `git-upload-archive`) are not offered.
 */
export type GitCommand =
  | { kind: "receive-pack"; owner: string; name: string; slug: string }
  | { kind: "refused"; message: string };

/** The two branches whose pushes build a release (docs/releases.md "Git push"). */
export const BUILD_BRANCHES = ["refs/heads/main", "refs/heads/master"] as const;

const GIT_COMMAND = /^(git[- ]receive-pack|git[- ]upload-pack|git[- ]upload-archive)(?:\s+(.*))?$/s;
/** An organization handle and a fleet name (packages/domain names.ts), `.git` optional. */
const SLUG = /^([a-z0-9_-]{1,100})\/([a-z0-9][a-z0-9_-]{0,99}?)(\.git)?$/i;

export const GIT_REMOTE_HINT = "Push to <username>@<host>:<organization>/<fleet>.git";
export const GIT_FETCH_REFUSED = "This server takes git pushes only: fetching and cloning are not offered.";

/** What an exec request asks for when it is a git command; undefined for anything else. */
export function parseGitCommand(line: string | undefined): GitCommand | undefined {
  const match = GIT_COMMAND.exec((line ?? "").trim());
  if (!match) return undefined;
  if (!/receive-pack$/.test(match[1] ?? "")) return { kind: "refused", message: GIT_FETCH_REFUSED };
  let path = (match[2] ?? "").trim();
  const quote = path[0];
  if ((quote === "'" || quote === '"') && path.length >= 2 && path.endsWith(quote)) path = path.slice(1, -1);
  if (path.startsWith("/")) path = path.slice(1);
  const slug = SLUG.exec(path);
  if (!slug) return { kind: "refused", message: `Not a fleet's repository: ${shown(path)}. ${GIT_REMOTE_HINT}` };
  const owner = (slug[1] ?? "").toLowerCase();
  const name = slug[2] ?? "";
  return { kind: "receive-pack", owner, name, slug: `${owner}/${name.toLowerCase()}` };
}

/** Text from the client, shown back: printable ASCII only, and not much of it. */
function shown(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, "?");
  return JSON.stringify(printable.length > 80 ? `${printable.slice(0, 80)}…` : printable);
}

export type RefUpdate = { old: string; new: string; ref: string };

const ZERO = /^0+$/;
const UPDATE = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (refs\/\S+)$/;

/** The ref updates git hands a pre-receive hook (`<old> <new> <ref>` lines); undefined when malformed. */
export function parseRefUpdates(text: string): RefUpdate[] | undefined {
  const lines = text.split("\n").filter((line) => line !== "");
  const updates: RefUpdate[] = [];
  for (const line of lines) {
    const match = UPDATE.exec(line);
    if (!match) return undefined;
    updates.push({ old: match[1] ?? "", new: match[2] ?? "", ref: match[3] ?? "" });
  }
  return updates.length > 0 ? updates : undefined;
}

export const isZero = (sha: string) => ZERO.test(sha);

const branchName = (ref: string) => ref.replace(/^refs\/heads\//, "");

/**
 * Which push builds (docs/releases.md "Git push"): one update of main or master to a commit.
 * Anything else is refused as a whole, with the reason, and nothing changes: other branches and
 * tags, deletions, and more than one branch at a time.
 */
export function pushVerdict(updates: RefUpdate[]): { build: RefUpdate } | { refused: string } {
  const others = updates.filter((update) => !(BUILD_BRANCHES as readonly string[]).includes(update.ref));
  if (others.length > 0) {
    const refs = others.map((update) => update.ref).join(", ");
    return {
      refused: `Only main or master can be pushed here (a push to either builds a release); refused: ${refs}. Nothing was changed.`,
    };
  }
  const [update] = updates;
  if (!update || updates.length > 1) {
    return { refused: "Push one branch at a time, main or master. Nothing was changed." };
  }
  if (isZero(update.new)) {
    return { refused: `Deleting ${branchName(update.ref)} is not allowed. Nothing was changed.` };
  }
  return { build: update };
}
