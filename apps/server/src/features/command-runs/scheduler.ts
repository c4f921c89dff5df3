import crypto from "node:crypto";
import { EventEmitter } from "node:events";
import {
  appendCapped,
  COMMAND_RUN_LIMITS,
  type CommandDeviceState,
  type CommandRunSummary,
  type ExecFrame,
  isFinalCommandState,
  summarizeCommandStates,
} from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { recordAudit } from "../audit/record.ts";
import type { Bus } from "../devices/bus.ts";
import type { DeviceFrame, Relay } from "../devices/relay.ts";
import {
  abandonedRuns,
  type DevicePatch,
  failAbandonedRun,
  finishRun,
  type RunRow,
  updateRunDevices,
} from "./queries.ts";

/**
 * The scheduler of bulk commands (docs/bulk-commands.md). The instance that created a run
 * schedules it: it sends `exec-start` to at most `concurrency` devices at a time over the relay
 * (to the instance holding a device's socket through the bus, as terminals do), collects their
 * output and exit codes, and tells listeners (the stream endpoint, here or on another instance)
 * each change. Device rows are written in batches; the run is audited when it ends.
 */

const FLUSH_MS = 250;
/** Each instance says it is alive this often (with Redis); runs of an instance gone this long are abandoned. */
const ALIVE_EVERY_MS = 30_000;
const ALIVE_TTL_MS = 90_000;

export type RunDevice = {
  id: number;
  uuid: string;
  name: string;
  state: CommandDeviceState;
  exitCode: number | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  output: string;
  truncated: boolean;
  reason: string | null;
  session?: string;
  /** The instance holding the device's socket when its command started. */
  owner?: string;
  safetyTimer?: NodeJS.Timeout;
};

type ActiveRun = {
  row: RunRow;
  devices: Map<number, RunDevice>;
  queue: number[];
  running: number;
  windowTimer: NodeJS.Timeout | undefined;
  ended: boolean;
};

/** What a run's listeners hear (the stream endpoint's events). */
export type RunEvent =
  | { event: "output"; run: number; device: number; uuid: string; stream: "stdout" | "stderr"; data: string }
  | {
      event: "state";
      run: number;
      device: number;
      uuid: string;
      name: string;
      state: CommandDeviceState;
      exit_code: number | null;
      reason: string | null;
      started_at: string | null;
      finished_at: string | null;
      duration_ms: number | null;
    }
  | { event: "summary"; run: number; status: "finished" | "cancelled"; summary: CommandRunSummary };

type ToDevice = { deviceId: number; frame: ExecFrame; origin: string };
type ToRun = { deviceId: number; frame: ExecFrame };

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function createCommandScheduler(options: {
  relay: Relay;
  bus: Bus;
  db: Pick<Queryable, "query">;
  /** The devices of a batch about to start that must be refused instead, with the reason. */
  checkStart: (run: RunRow, deviceIds: number[]) => Promise<Map<number, string>>;
  onError: (error: unknown) => void;
}) {
  const { relay, bus, db, checkStart, onError } = options;
  const runs = new Map<number, ActiveRun>();
  /** Runs that ended here and whose final rows are still being written. */
  const ending = new Map<number, ActiveRun>();
  /** session → the run and device it belongs to (sessions scheduled here). */
  const sessions = new Map<string, { run: ActiveRun; device: RunDevice }>();
  /** Sessions of runs on other instances whose device socket is here: session → origin. */
  const forwarded = new Map<string, { origin: string; deviceId: number }>();
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const patches = new Map<string, DevicePatch>();
  const writes = new Set<Promise<void>>();
  let flushTimer: NodeJS.Timeout | undefined;
  let aliveTimer: NodeJS.Timeout | undefined;

  const aliveKey = (instance: string) => `${bus.prefix}command-runs:alive:${instance}`;

  /** Whether the instance that schedules a run still runs (without Redis only this one does). */
  async function alive(instance: string | null): Promise<boolean> {
    if (instance === bus.instanceId) return true;
    if (!instance || !bus.redis) return false;
    return (await bus.redis.exists(aliveKey(instance)).catch(() => 1)) === 1;
  }

  async function recoverAbandoned() {
    for (const run of await abandonedRuns(db)) {
      if (runs.has(run.id) || (await alive(run.instance))) continue;
      await failAbandonedRun(db, run.id, "server restarted");
    }
  }

  function track(write: Promise<void>) {
    const tracked = write.catch(onError).finally(() => writes.delete(tracked));
    writes.add(tracked);
    return tracked;
  }

  function flush(): Promise<void> {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = undefined;
    const batch = [...patches.values()];
    patches.clear();
    return track(updateRunDevices(db, batch));
  }

  function patch(run: ActiveRun, device: RunDevice, fields: Partial<DevicePatch> = {}) {
    const key = `${run.row.id}:${device.id}`;
    patches.set(key, { ...patches.get(key), run: run.row.id, device: device.id, state: device.state, ...fields });
    flushTimer ??= setTimeout(() => void flush(), FLUSH_MS);
    flushTimer.unref();
  }

  function emit(event: RunEvent) {
    events.emit(`run:${event.run}`, event);
    if (bus.redis) void bus.toAll("command-run.event", event).catch(onError);
  }

  function stateEvent(run: ActiveRun, device: RunDevice): RunEvent {
    return {
      event: "state",
      run: run.row.id,
      device: device.id,
      uuid: device.uuid,
      name: device.name,
      state: device.state,
      exit_code: device.exitCode,
      reason: device.reason,
      started_at: iso(device.startedAt),
      finished_at: iso(device.finishedAt),
      duration_ms:
        device.startedAt && device.finishedAt ? device.finishedAt.getTime() - device.startedAt.getTime() : null,
    };
  }

  function toDevice(device: RunDevice, frame: ExecFrame): boolean {
    if (!device.owner || device.owner === bus.instanceId) return relay.sendFrame(device.id, frame as DeviceFrame);
    void bus
      .toInstance(device.owner, "command-run.to-device", {
        deviceId: device.id,
        frame,
        origin: bus.instanceId,
      } satisfies ToDevice)
      .catch(onError);
    return true;
  }

  /** The device reached a final state: its row, its event, the next device, maybe the run's end. */
  function settle(
    run: ActiveRun,
    device: RunDevice,
    state: CommandDeviceState,
    fields: { exitCode?: number | null; reason?: string | null } = {},
  ) {
    if (isFinalCommandState(device.state)) return;
    const wasRunning = device.state === "running";
    device.state = state;
    device.finishedAt = new Date();
    if (fields.exitCode !== undefined) device.exitCode = fields.exitCode;
    if (fields.reason !== undefined) device.reason = fields.reason;
    if (device.safetyTimer) clearTimeout(device.safetyTimer);
    device.safetyTimer = undefined;
    if (device.session) sessions.delete(device.session);
    patch(run, device, {
      exit_code: device.exitCode,
      finished_at: device.finishedAt.toISOString(),
      output: device.output,
      truncated: device.truncated,
      reason: device.reason,
    });
    emit(stateEvent(run, device));
    if (wasRunning) run.running -= 1;
    pump(run);
  }

  /**
   * Starts queued devices up to the run's concurrency; ends the run when nothing is left. The
   * creator's right to each device is asked again as its command starts (once per batch).
   */
  function pump(run: ActiveRun) {
    if (run.ended) return;
    const batch: RunDevice[] = [];
    while (run.running < run.row.concurrency && run.queue.length > 0) {
      const id = run.queue.shift() as number;
      const device = run.devices.get(id);
      if (device?.state !== "queued") continue;
      run.running += 1;
      device.state = "running";
      batch.push(device);
    }
    if (batch.length > 0) void startBatch(run, batch).catch(onError);
    if (run.running === 0 && run.queue.length === 0) {
      const open = [...run.devices.values()].some((device) => !isFinalCommandState(device.state));
      if (!open) end(run, run.row.status === "cancelled" ? "cancelled" : "finished");
    }
  }

  async function startBatch(run: ActiveRun, batch: RunDevice[]) {
    let refusals: Map<number, string>;
    try {
      refusals = await checkStart(
        run.row,
        batch.map((device) => device.id),
      );
    } catch (error) {
      onError(error);
      refusals = new Map(batch.map((device) => [device.id, "The run's permissions could not be checked"]));
    }
    for (const device of batch) {
      const reason = refusals.get(device.id);
      if (reason === undefined) void start(run, device);
      else settle(run, device, "refused", { reason });
    }
  }

  async function start(run: ActiveRun, device: RunDevice) {
    const owner = await relay.ownerOf(device.id).catch(() => undefined);
    if (run.ended || device.state !== "running") return;
    if (!owner) {
      // It went offline while queued: wait for it within the window, else it is offline.
      run.running -= 1;
      if (run.windowTimer) {
        device.state = "waiting_online";
        patch(run, device);
        emit(stateEvent(run, device));
        pump(run);
      } else {
        device.state = "queued";
        settle(run, device, "offline", { reason: "The device is offline" });
      }
      return;
    }
    device.owner = owner;
    device.session = crypto.randomUUID();
    device.startedAt = new Date();
    sessions.set(device.session, { run, device });
    const sent = toDevice(device, {
      type: "exec-start",
      session: device.session,
      command: run.row.command,
      target: run.row.target,
      timeout_s: run.row.timeout_s,
    });
    if (!sent) {
      settle(run, device, "offline", { reason: "The device is offline" });
      return;
    }
    patch(run, device, { started_at: device.startedAt.toISOString() });
    emit(stateEvent(run, device));
    // The device enforces the timeout; this catches a device that never answers.
    device.safetyTimer = setTimeout(
      () => {
        if (device.session) toDevice(device, { type: "exec-cancel", session: device.session });
        settle(run, device, "timed_out", { reason: "No answer from the device within the timeout" });
      },
      (run.row.timeout_s + COMMAND_RUN_LIMITS.graceS) * 1000,
    );
    device.safetyTimer.unref();
  }

  function end(run: ActiveRun, status: "finished" | "cancelled") {
    if (run.ended) return;
    run.ended = true;
    if (run.windowTimer) clearTimeout(run.windowTimer);
    runs.delete(run.row.id);
    // Until its rows are written, the run's devices are read from here (the stream's snapshot).
    ending.set(run.row.id, run);
    const summary = summarizeCommandStates([...run.devices.values()].map((device) => device.state));
    void track(
      (async () => {
        await flush();
        await finishRun(db, run.row.id, status);
        await recordAudit(
          db,
          { user: run.row.created_by ?? undefined, apiKey: run.row.api_key ?? undefined },
          {
            action: "command_run.finished",
            organization: run.row.organization,
            targetType: "command_run",
            targetId: run.row.id,
            details: { command: run.row.command, target: run.row.target, status, summary },
          },
        );
        emit({ event: "summary", run: run.row.id, status, summary });
      })().finally(() => ending.delete(run.row.id)),
    );
  }

  /** A frame of a command scheduled here. */
  function fromDevice(deviceId: number, frame: ExecFrame) {
    const entry = sessions.get(frame.session);
    if (!entry || entry.device.id !== deviceId) return;
    const { run, device } = entry;
    if (device.state !== "running") return;
    if (frame.type === "exec-output") {
      if (typeof frame.data !== "string") return;
      const data = frame.data.slice(0, COMMAND_RUN_LIMITS.chunkChars);
      const stream = frame.stream === "stderr" ? "stderr" : "stdout";
      const kept = appendCapped(device.output, data, COMMAND_RUN_LIMITS.outputChars);
      device.output = kept.text;
      device.truncated ||= kept.dropped;
      emit({ event: "output", run: run.row.id, device: device.id, uuid: device.uuid, stream, data });
    } else if (frame.type === "exec-exit") {
      const code = typeof frame.code === "number" && Number.isInteger(frame.code) ? frame.code : null;
      const message = typeof frame.message === "string" ? frame.message.slice(0, 500) : null;
      if (frame.reason === "timeout") {
        settle(run, device, "timed_out", { exitCode: code, reason: `Timed out after ${run.row.timeout_s} s` });
      } else if (frame.reason === "refused" || frame.reason === "error") {
        settle(run, device, "failed", { exitCode: code, reason: message ?? "The device could not run the command" });
      } else if (code === 0) {
        settle(run, device, "succeeded", { exitCode: 0 });
      } else {
        const signal = typeof frame.signal === "string" ? frame.signal.slice(0, 20) : undefined;
        settle(run, device, "failed", { exitCode: code, reason: signal ? `Killed by ${signal}` : null });
      }
    }
  }

  relay.onFrame((deviceId, raw) => {
    if (!raw.type.startsWith("exec-") || typeof raw.session !== "string") return;
    const frame = raw as unknown as ExecFrame;
    const away = forwarded.get(frame.session);
    if (away && away.deviceId === deviceId) {
      if (frame.type === "exec-exit") forwarded.delete(frame.session);
      void bus.toInstance(away.origin, "command-run.to-run", { deviceId, frame } satisfies ToRun).catch(onError);
      return;
    }
    fromDevice(deviceId, frame);
  });

  // The socket went: commands running over it are lost.
  relay.onSocketClosed((deviceId) => {
    for (const { run, device } of [...sessions.values()]) {
      if (device.id === deviceId && device.owner === bus.instanceId) {
        settle(run, device, "failed", { reason: "The device disconnected while the command ran" });
      }
    }
    for (const [session, away] of [...forwarded]) {
      if (away.deviceId !== deviceId) continue;
      forwarded.delete(session);
      const frame: ExecFrame = {
        type: "exec-exit",
        session,
        code: null,
        reason: "error",
        message: "The device disconnected while the command ran",
      };
      void bus.toInstance(away.origin, "command-run.to-run", { deviceId, frame } satisfies ToRun).catch(onError);
    }
  });

  // A device came online: its waiting commands start.
  relay.onAttached((deviceId) => {
    for (const run of runs.values()) {
      const device = run.devices.get(deviceId);
      if (device?.state !== "waiting_online") continue;
      device.state = "queued";
      run.queue.push(deviceId);
      patch(run, device);
      emit(stateEvent(run, device));
      pump(run);
    }
  });

  bus.on("command-run.to-device", (payload) => {
    const { deviceId, frame, origin } = payload as ToDevice;
    if (!frame || typeof frame.session !== "string") return;
    if (frame.type === "exec-start") forwarded.set(frame.session, { origin, deviceId });
    if (frame.type === "exec-cancel") forwarded.delete(frame.session);
    if (!relay.sendFrame(deviceId, frame as DeviceFrame) && frame.type === "exec-start") {
      forwarded.delete(frame.session);
      const back: ExecFrame = { type: "exec-exit", session: frame.session, code: null, reason: "error" };
      back.message = "The device is offline";
      void bus.toInstance(origin, "command-run.to-run", { deviceId, frame: back } satisfies ToRun).catch(onError);
    }
  });
  bus.on("command-run.to-run", (payload) => {
    const { deviceId, frame } = payload as ToRun;
    if (frame && typeof frame.session === "string" && typeof deviceId === "number") fromDevice(deviceId, frame);
  });
  bus.on("command-run.event", (payload) => {
    const event = payload as RunEvent;
    if (typeof event?.run === "number") events.emit(`run:${event.run}`, event);
  });
  bus.on("command-run.cancel", (payload) => {
    const run = runs.get(Number((payload as { run?: unknown }).run));
    if (run) cancelRun(run);
  });

  function cancelRun(run: ActiveRun) {
    if (run.ended) return;
    run.row.status = "cancelled";
    run.queue.length = 0;
    for (const device of run.devices.values()) {
      if (isFinalCommandState(device.state)) continue;
      if (device.state === "running" && device.session)
        toDevice(device, { type: "exec-cancel", session: device.session });
      settle(run, device, "cancelled", { reason: "The run was cancelled" });
    }
    pump(run);
  }

  return {
    /** Schedules a run just written (its devices: queued, waiting_online, offline or refused). */
    schedule(row: RunRow, devices: RunDevice[]) {
      const run: ActiveRun = {
        row,
        devices: new Map(devices.map((device) => [device.id, device])),
        queue: devices.filter((device) => device.state === "queued").map((device) => device.id),
        running: 0,
        windowTimer: undefined,
        ended: false,
      };
      runs.set(row.id, run);
      if (row.queue_window_s > 0) {
        run.windowTimer = setTimeout(() => {
          run.windowTimer = undefined;
          for (const device of run.devices.values()) {
            if (device.state === "waiting_online") {
              settle(run, device, "offline", { reason: `Not online within ${row.queue_window_s} s` });
            }
          }
          pump(run);
        }, row.queue_window_s * 1000);
        run.windowTimer.unref();
      }
      pump(run);
    },

    /** The devices of a run scheduled here, as they are now (the stream's first event). */
    live(runId: number): RunDevice[] | undefined {
      const run = runs.get(runId) ?? ending.get(runId);
      return run ? [...run.devices.values()] : undefined;
    },

    /** Cancels a run here, or asks the other instances; false when no live run was found here. */
    cancel(runId: number): boolean {
      const run = runs.get(runId);
      if (run) {
        cancelRun(run);
        return true;
      }
      if (bus.redis) void bus.toAll("command-run.cancel", { run: runId }).catch(onError);
      return false;
    },

    /** Listens to a run's events (here or from other instances); answers the unsubscribe. */
    subscribe(runId: number, listener: (event: RunEvent) => void): () => void {
      events.on(`run:${runId}`, listener);
      return () => events.off(`run:${runId}`, listener);
    },

    /**
     * Start-up: runs left running by an instance that is gone (this one before a restart, or a
     * crashed one) are finished, their open devices failed with "server restarted".
     */
    async start() {
      const sayAlive = () =>
        void bus.redis?.set(aliveKey(bus.instanceId), "1", "PX", ALIVE_TTL_MS).catch(() => undefined);
      sayAlive();
      if (bus.redis) {
        // Also finds the runs of an instance that died later (its alive key lapses).
        aliveTimer = setInterval(() => {
          sayAlive();
          void recoverAbandoned().catch(onError);
        }, ALIVE_EVERY_MS);
        aliveTimer.unref();
      }
      await recoverAbandoned();
    },

    /** Waits for the rows and audit entries written so far. */
    async settled() {
      await flush();
      await Promise.all([...writes]);
    },

    /** Shutdown: pending rows are written; runs still open stay "running" for the next start-up. */
    async close() {
      if (aliveTimer) clearInterval(aliveTimer);
      // Runs left open here are abandoned: the next start-up of any instance finishes them.
      await bus.redis?.del(aliveKey(bus.instanceId)).catch(() => undefined);
      for (const run of runs.values()) {
        if (run.windowTimer) clearTimeout(run.windowTimer);
        for (const device of run.devices.values()) if (device.safetyTimer) clearTimeout(device.safetyTimer);
      }
      await flush();
      await Promise.all([...writes]);
    },
  };
}

export type CommandScheduler = ReturnType<typeof createCommandScheduler>;
