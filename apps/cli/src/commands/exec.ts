import { COMMAND_RUN_LIMITS, createSseParser } from "@flotilla/domain";
import { parseCommand } from "../args.ts";
import { CliError, serverMessage, UsageError } from "../errors.ts";
import type { Command } from "../io.ts";
import { openSession, resolveFleet, type Session } from "../sdk.ts";

/** The answer of `POST /command/v1/runs` (docs/bulk-commands.md). */
type Created = {
  id: number;
  devices: { id: number; uuid: string; name: string; state: string; reason: string | null }[];
};
type Summary = {
  total: number;
  succeeded: number;
  failed: number;
  timed_out: number;
  offline: number;
  refused: number;
  cancelled: number;
};

/** `5 devices: 4 succeeded, 1 failed, 0 timed out, 0 offline` (refused and cancelled when there are any). */
export function summaryLine(summary: Summary): string {
  const parts = [
    `${summary.succeeded} succeeded`,
    `${summary.failed} failed`,
    `${summary.timed_out} timed out`,
    `${summary.offline} offline`,
  ];
  if (summary.refused > 0) parts.push(`${summary.refused} refused`);
  if (summary.cancelled > 0) parts.push(`${summary.cancelled} cancelled`);
  return `${summary.total} device${summary.total === 1 ? "" : "s"}: ${parts.join(", ")}`;
}

/** Prefixes each complete line with the device's label; keeps a partial line until it ends. */
class Prefixer {
  private readonly partial = new Map<number, string>();
  constructor(private readonly write: (line: string) => void) {}

  push(device: number, label: string, data: string) {
    const text = (this.partial.get(device) ?? "") + data;
    const lines = text.split("\n");
    this.partial.set(device, lines.pop() ?? "");
    for (const line of lines) this.write(`${label}: ${line}`);
  }

  end(device: number, label: string) {
    const rest = this.partial.get(device);
    this.partial.delete(device);
    if (rest) this.write(`${label}: ${rest}`);
  }
}

async function request(session: Session, method: "GET" | "POST", path: string, body?: unknown): Promise<Response> {
  try {
    return await fetch(`${session.apiUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${session.token}`,
        Accept: method === "GET" && path.endsWith("/stream") ? "text/event-stream" : "application/json",
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new CliError(`Cannot reach the API at ${session.apiUrl} (${cause})`);
  }
}

async function json(response: Response): Promise<unknown> {
  const text = await response.text();
  if (response.status === 401) throw new CliError("Not logged in, or the session expired: run flotilla login");
  if (!response.ok) {
    const message = serverMessage(text);
    throw new CliError(message ? `${message} (HTTP ${response.status})` : `The API answered HTTP ${response.status}`);
  }
  return text ? JSON.parse(text) : null;
}

/** The stream's events, as they arrive. */
async function* serverEvents(response: Response): AsyncGenerator<{ event: string; data: Record<string, unknown> }> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  const parser = createSseParser();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    for (const { event, data } of parser.feed(decoder.decode(chunk, { stream: true }))) {
      yield { event, data: data as Record<string, unknown> };
    }
  }
}

const whole = (value: string | undefined, name: string, min: number, max: number): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
};

const FINAL = new Set(["succeeded", "failed", "timed_out", "offline", "refused", "cancelled"]);

export const exec: Command = {
  name: "exec",
  summary: "run a shell command on many devices",
  usage: `Usage: flotilla exec <fleet> [options] -- <command…>
       flotilla exec --device <uuid> [--device <uuid>…] [options] -- <command…>

Runs the command with sh -c on each device's host OS (or in a service's container), over the
devices' cloudlink connections, and prints each device's output as it comes, prefixed with the
device's name, then a summary. Exits 0 when the command succeeded on every device, 1 otherwise.
Ctrl-C cancels the run.

  <fleet>             organization/fleet, a fleet name, or the fleet's numeric id: all its devices
  --device <uuid>     a device (repeatable), instead of a fleet
  --tag <key[=value]> only the devices with this tag (and value)
  --service <name>    run in this service's container instead of the host OS
  --timeout <s>       per device, 1-3600 (default 60)
  --concurrency <n>   devices at once, 1-1000 (default 50)
  --queue <s>         wait up to this long for offline devices to come online (default 0: report them offline)
  --json              print the finished run as JSON instead`,
  async run(args, io) {
    const dashes = args.indexOf("--");
    if (dashes === -1 || dashes === args.length - 1) throw new UsageError("missing the command after --");
    const command = args.slice(dashes + 1).join(" ");
    if (command.length > COMMAND_RUN_LIMITS.commandChars) {
      throw new UsageError(`the command is longer than ${COMMAND_RUN_LIMITS.commandChars} characters`);
    }
    const { values, positionals } = parseCommand(
      args.slice(0, dashes),
      {
        device: { type: "string", multiple: true },
        tag: { type: "string" },
        service: { type: "string" },
        timeout: { type: "string" },
        concurrency: { type: "string" },
        queue: { type: "string" },
        json: { type: "boolean" },
      },
      { min: 0, max: 1, names: "the fleet (or --device)" },
    );
    const devices = values.device ?? [];
    if ((positionals.length === 0) === (devices.length === 0)) {
      throw new UsageError("name either a fleet or --device (not both)");
    }
    for (const uuid of devices) {
      if (!/^[0-9a-f]{7,62}$/.test(uuid)) throw new UsageError(`--device needs a device uuid, got "${uuid}"`);
    }
    const L = COMMAND_RUN_LIMITS;
    const timeout = whole(values.timeout, "timeout", L.timeoutS.min, L.timeoutS.max);
    const concurrency = whole(values.concurrency, "concurrency", L.concurrency.min, L.concurrency.max);
    const queue = whole(values.queue, "queue", L.queueWindowS.min, L.queueWindowS.max);
    const [tagKey, ...tagValue] = (values.tag ?? "").split("=");
    if (values.tag !== undefined && !tagKey) throw new UsageError("--tag needs a key (key or key=value)");

    const session = await openSession(io.env);
    const fleet = positionals[0] ? await resolveFleet(session.sdk, positionals[0]) : undefined;
    const body = {
      command,
      target: values.service ? { service: values.service } : "host",
      ...(fleet ? { fleet: fleet.id } : { devices }),
      ...(values.tag !== undefined
        ? { filter: { tag_key: tagKey, ...(tagValue.length > 0 ? { tag_value: tagValue.join("=") } : {}) } }
        : {}),
      ...(timeout !== undefined ? { timeout_s: timeout } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(queue !== undefined ? { queue_window_s: queue } : {}),
    };
    const created = (await json(await request(session, "POST", "/command/v1/runs", body))) as Created;
    await session.save();
    const labels = new Map(created.devices.map((d) => [d.id, d.name || d.uuid.slice(0, 7)]));
    const width = Math.max(...[...labels.values()].map((label) => label.length));
    const label = (id: number) => (labels.get(id) ?? String(id)).padEnd(width);
    const out = new Prefixer((line) => io.out(line));
    if (!values.json) io.err(`Run ${created.id}: ${command} on ${created.devices.length} device(s)`);

    const cancel = () => {
      io.err("Cancelling the run…");
      void request(session, "POST", `/command/v1/runs/${created.id}/cancel`).catch(() => undefined);
    };
    process.once("SIGINT", cancel);
    let summary: Summary | undefined;
    try {
      const response = await request(session, "GET", `/command/v1/runs/${created.id}/stream`);
      if (!response.ok) await json(response);
      /** A device's end, told once (the snapshot and a state event may both say it). */
      const told = new Set<number>();
      const tell = (device: {
        id: number;
        state: string;
        exit_code: unknown;
        reason: unknown;
        duration_ms: unknown;
      }) => {
        if (!FINAL.has(device.state) || told.has(device.id)) return;
        told.add(device.id);
        out.end(device.id, label(device.id));
        if (values.json) return;
        const exit = typeof device.exit_code === "number" ? ` exit ${device.exit_code}` : "";
        const took = typeof device.duration_ms === "number" ? ` in ${(device.duration_ms / 1000).toFixed(1)} s` : "";
        const why = typeof device.reason === "string" && device.reason ? `: ${device.reason}` : "";
        if (device.state !== "succeeded") io.err(`${label(device.id)}: ${device.state}${exit}${took}${why}`);
      };
      for await (const { event, data } of serverEvents(response)) {
        if (event === "snapshot") {
          // Devices already done when the stream began: their output and end at once.
          for (const device of data.devices as {
            id: number;
            state: string;
            output: string;
            exit_code: unknown;
            reason: unknown;
            duration_ms: unknown;
          }[]) {
            if (!FINAL.has(device.state)) continue;
            if (!values.json && device.output) out.push(device.id, label(device.id), device.output);
            tell(device);
          }
        } else if (event === "output") {
          if (!values.json) out.push(data.device as number, label(data.device as number), String(data.data));
        } else if (event === "state") {
          tell({
            id: data.device as number,
            state: String(data.state),
            exit_code: data.exit_code,
            reason: data.reason,
            duration_ms: data.duration_ms,
          });
        } else if (event === "summary") {
          summary = data.summary as Summary;
        }
      }
    } finally {
      process.off("SIGINT", cancel);
    }
    if (!summary) throw new CliError(`The run's stream ended early: see GET /command/v1/runs/${created.id}`);
    if (values.json) {
      io.out(JSON.stringify(await json(await request(session, "GET", `/command/v1/runs/${created.id}`)), null, 2));
    } else {
      io.out(summaryLine(summary));
    }
    return summary.total > 0 && summary.succeeded === summary.total ? 0 : 1;
  },
};
