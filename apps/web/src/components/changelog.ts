/** Whether the changelog dialog opens by itself: the stored major version is below the latest (spec 1 §2.5). */
export function shouldShowChangelog(stored: string, latest: string): boolean {
  const major = (version: string) => Number.parseInt(version.split(".")[0] ?? "", 10);
  // Nothing stored yet (a new browser): nothing to catch up on; the latest is recorded silently.
  if (!stored) return false;
  const [was, is] = [major(stored), major(latest)];
  return Number.isFinite(was) && Number.isFinite(is) && was < is;
}

export interface ChangelogEntry {
  version: string;
  date: string;
  changes: string[];
}

export function parseChangelog(value: unknown): ChangelogEntry[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (entry): entry is ChangelogEntry =>
      typeof entry === "object" &&
      entry !== null &&
      typeof (entry as ChangelogEntry).version === "string" &&
      Array.isArray((entry as ChangelogEntry).changes),
  );
}
