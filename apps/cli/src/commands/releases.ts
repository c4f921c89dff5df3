import { effectiveReleaseStatus } from "@flotilla/domain";
import { parseCommand } from "../args.ts";
import type { Command } from "../io.ts";
import { openSession, resolveFleet } from "../sdk.ts";

export interface ReleaseRow {
  id: number;
  raw_version: string;
  commit: string;
  status: string;
  created_at: string;
  is_final: boolean;
  update_timestamp?: string | null;
  start_timestamp?: string | null;
}

/** `2025-11-24 18:35` in local time. */
function formatDate(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The release table: newest first as given, ids right-aligned, drafts marked, a stale running build as timeout. */
export function releaseTable(releases: ReleaseRow[], now = Date.now()): string {
  const rows = releases.map((release) => [
    String(release.id),
    release.is_final ? release.raw_version : `${release.raw_version} (draft)`,
    release.commit.slice(0, 7),
    effectiveReleaseStatus(release, now),
    formatDate(release.created_at),
  ]);
  const header = ["ID", "VERSION", "COMMIT", "STATUS", "CREATED"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padStart(widths[0] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

export const releases: Command = {
  name: "releases",
  summary: "list a fleet's releases",
  usage: `Usage: flotilla releases <fleet> [--json]

Lists the fleet's releases, newest first: id, version, commit, status and when it was created.

  <fleet>   organization/fleet, a fleet name, or the fleet's numeric id
  --json    print the releases as JSON`,
  async run(args, io) {
    const { values, positionals } = parseCommand(
      args,
      { json: { type: "boolean" } },
      { min: 1, max: 1, names: "the fleet" },
    );
    const session = await openSession(io.env);
    const fleet = await resolveFleet(session.sdk, positionals[0] ?? "");
    const list = (await session.sdk.models.release.getAllByApplication(fleet.id, {
      $select: [
        "id",
        "raw_version",
        "commit",
        "status",
        "created_at",
        "is_final",
        "update_timestamp",
        "start_timestamp",
      ],
      $orderby: { created_at: "desc" },
    })) as ReleaseRow[];
    await session.save();
    if (values.json) io.out(JSON.stringify(list, null, 2));
    else if (list.length === 0) io.out(`${fleet.slug} has no releases yet: make one with flotilla push ${fleet.slug}`);
    else io.out(releaseTable(list));
    return 0;
  },
};
