import { parseCommand } from "../args.ts";
import { CliError, serverMessage, UsageError } from "../errors.ts";
import type { Command } from "../io.ts";
import { openSession, resolveFleet, type Session } from "../sdk.ts";

/** A rollout as /v7 answers it with its waves (docs/rollouts.md "Resources"). */
export interface RolloutRow {
  id: number;
  status: string;
  reason: string | null;
  current_wave: number;
  wave_count: number;
  is_in_effect: boolean;
  created_at: string;
  ended_at: string | null;
  from__release: { __id: number } | null;
  to__release: { __id: number } | null;
  rollout_wave: {
    wave_index: number;
    name: string | null;
    state: string;
    reason: string | null;
    device_count: number;
    healthy_count: number;
    failed_count: number;
    pending_count: number;
  }[];
}

const CONTROLS = ["pause", "resume", "abort"] as const;
type Control = (typeof CONTROLS)[number];
const PAST: Record<Control, string> = { pause: "paused", resume: "resumed", abort: "aborted" };

/** The rollout and a table of its waves with counts, as `flotilla rollout status` prints it. */
export function rolloutText(rollout: RolloutRow, fleetSlug: string): string {
  const waves = [...rollout.rollout_wave].sort((a, b) => a.wave_index - b.wave_index);
  const header = ["WAVE", "NAME", "STATE", "DEVICES", "HEALTHY", "FAILED", "PENDING"];
  const rows = waves.map((wave) => [
    String(wave.wave_index + 1),
    wave.name || "-",
    wave.state,
    String(wave.device_count),
    String(wave.healthy_count),
    String(wave.failed_count),
    String(wave.pending_count),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column >= 3 ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  const done = waves.filter((wave) => wave.state === "passed").length;
  const lines = [
    `Rollout ${rollout.id} of ${fleetSlug}: ${rollout.status}${rollout.is_in_effect ? "" : " (no longer in effect)"}`,
    `Release ${rollout.from__release?.__id ?? "-"} → ${rollout.to__release?.__id ?? "-"}, wave ${Math.min(rollout.current_wave + 1, rollout.wave_count)} of ${rollout.wave_count} (${done} passed)`,
  ];
  if (rollout.reason) lines.push(`Reason: ${rollout.reason}`);
  lines.push("", line(header), ...rows.map(line));
  for (const wave of waves) if (wave.reason) lines.push(`  wave ${wave.wave_index + 1}: ${wave.reason}`);
  return lines.join("\n");
}

async function api(session: Session, method: "GET" | "POST", path: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${session.apiUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${session.token}`, Accept: "application/json" },
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new CliError(`Cannot reach the API at ${session.apiUrl} (${cause})`);
  }
  const text = await response.text();
  if (response.status === 401) throw new CliError("Not logged in, or the session expired: run flotilla login");
  if (!response.ok) {
    const message = serverMessage(text);
    throw new CliError(message ? `${message} (HTTP ${response.status})` : `The API answered HTTP ${response.status}`);
  }
  return text ? JSON.parse(text) : null;
}

async function latestRollout(session: Session, fleetId: number): Promise<RolloutRow | undefined> {
  const answer = (await api(
    session,
    "GET",
    `/v7/rollout?$filter=belongs_to__application eq ${fleetId}&$orderby=id desc&$top=1&$expand=rollout_wave`,
  )) as { d?: RolloutRow[] } | null;
  return answer?.d?.[0];
}

/** Explains a refused control in the CLI's words. */
function refusal(error: unknown, control: Control): never {
  if (error instanceof CliError && /\(HTTP 403\)$/.test(error.message)) {
    throw new CliError(`You may not ${control} this fleet's rollout: it takes a developer or administrator role`);
  }
  if (error instanceof CliError && /\(HTTP 409\)$/.test(error.message)) {
    throw new CliError(`Cannot ${control} the rollout: ${error.message.replace(/ \(HTTP 409\)$/, "")}`);
  }
  throw error;
}

export const rollout: Command = {
  name: "rollout",
  summary: "show or steer a fleet's phased rollout",
  usage: `Usage: flotilla rollout <status|pause|resume|abort> <fleet> [--json]

Shows the fleet's latest rollout (its waves with device counts), or steers it:
  status   the rollout, its status and reason, and each wave's healthy, failed and pending devices
  pause    no wave advances or fails until resumed
  resume   run a paused or halted rollout again (a halted wave starts over)
  abort    roll back: every device targets the previous release

  <fleet>   organization/fleet, a fleet name, or the fleet's numeric id
  --json    print the rollout as JSON`,
  async run(args, io) {
    const { values, positionals } = parseCommand(
      args,
      { json: { type: "boolean" } },
      { min: 2, max: 2, names: "the action (status, pause, resume or abort) and the fleet" },
    );
    const action = positionals[0] ?? "";
    if (action !== "status" && !(CONTROLS as readonly string[]).includes(action)) {
      throw new UsageError(`unknown rollout action "${action}": status, pause, resume or abort`);
    }
    const session = await openSession(io.env);
    const fleet = await resolveFleet(session.sdk, positionals[1] ?? "");
    const latest = await latestRollout(session, fleet.id);
    if (!latest) {
      throw new CliError(
        `${fleet.slug} has no rollout: a rollout starts when a new release reaches a fleet with a release policy`,
      );
    }
    let shown = latest;
    if (action !== "status") {
      const control = action as Control;
      await api(session, "POST", `/rollout/v1/${latest.id}/${control}`).catch((error) => refusal(error, control));
      shown = (await latestRollout(session, fleet.id)) ?? latest;
      if (!values.json) io.out(`Rollout ${latest.id} of ${fleet.slug} ${PAST[control]}.`);
    }
    await session.save();
    if (values.json) io.out(JSON.stringify(shown, null, 2));
    else io.out(rolloutText(shown, fleet.slug));
    return 0;
  },
};
