import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import type { Socket } from "node:net";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { ServerChannel } from "ssh2";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { byteCap } from "../../lib/byte-cap.ts";
import { mayDo } from "../data-api/actions.ts";
import { removeArchive, spoolArchive } from "../releases/archive.ts";
import { type Builder, runBuild } from "../releases/builder.ts";
import { PROJECT_MAX_UNPACKED_BYTES, ProjectError, readProject } from "../releases/project.ts";
import { type FleetToBuild, findFleet, successfulReleaseOfCommit } from "../releases/queries.ts";
import { rollOut } from "../releases/rollout.ts";
import { type GitCommand, isZero, parseRefUpdates, pushVerdict, type RefUpdate } from "./git-commands.ts";
import { writePreReceiveHook } from "./git-hook.ts";
import { fleetRepository, gitRoot } from "./git-repositories.ts";

/**
 * `git push` through the SSH gateway (docs/releases.md "Git push"). The pushed objects go into a
 * bare repository per fleet, `{data dir}/git/fleets/{fleet id}.git`, with Debian's `git
 * receive-pack`, run without a shell and bounded in size and time. Its pre-receive hook
 * (git-hook.ts) hands the ref updates back here: a push of main or master is built as
 * `flotilla push` builds a project (the pushed tree as the archive, the pushed commit as the
 * release's commit), the build log going to the pusher as `remote:` lines while it is written;
 * the refs move only when the build succeeded, so a failed build changes nothing in the
 * repository and `git push` exits non-zero.
 */

/** Bounds of a push (docs/releases.md "Git push"). */
export const GIT_PUSH_LIMITS = {
  /** Pushed pack data (git's receive.maxInputSize), as much as a pushed project archive. */
  packBytes: 64 * 1024 * 1024,
  /** From the connection to the hook: the upload of the objects. */
  uploadMs: 10 * 60_000,
  /** The whole push, its build included. */
  pushMs: 60 * 60_000,
  /** Each git step of the server's own (init, cat-file, merge-base, archive). */
  stepMs: 2 * 60_000,
  /** Pushes at once on one server instance, and one per fleet. */
  concurrent: 8,
};

/** The one answer to a fleet that does not exist and to one the user may not push to. */
export const noPushRights = (slug: string) =>
  `You cannot push to ${slug}: there is no such fleet, or your role in it does not allow pushing releases.`;

/** git's own words for a forced push that would lose commits (receive.denyNonFastForwards). */
export const nonFastForward = (ref: string) => `denying non-fast-forward ${ref} (you should pull first)`;

const MAX_HOOK_MESSAGE_CHARS = 1024 * 1024;

const duration = (ms: number) =>
  ms >= 60_000 ? `${Math.round(ms / 60_000)} minutes` : `${Math.round(ms / 1000)} seconds`;

type Log = Pick<FastifyBaseLogger, "error" | "warn" | "debug">;

export type GitPushes = {
  run(caller: Caller, channel: ServerChannel, command: GitCommand): Promise<void>;
  /** Removes the repositories of fleets that no longer exist. */
  prune(): Promise<void>;
};

/** git with nothing from the host's or a user's configuration, in English. */
function gitEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    ...extra,
  };
}

/** One git command of the server's own, bounded in time and output. */
function git(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "git",
      args,
      { ...options, timeout: GIT_PUSH_LIMITS.stepMs, killSignal: "SIGKILL", maxBuffer: 256 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr || error?.message || "") });
      },
    );
  });
}

/** The receive-pack settings every push runs with (given on its command line, not read from the repository). */
function receivePackConfig(hooks: string): string[] {
  return [
    `core.hooksPath=${hooks}`,
    "receive.denyNonFastForwards=true",
    "receive.denyDeletes=true",
    `receive.maxInputSize=${GIT_PUSH_LIMITS.packBytes}`,
    "receive.fsckObjects=true",
    "receive.advertisePushOptions=false",
    // A repository repacked now and then, inside the push's time, not in a process left behind.
    "gc.autoDetach=false",
  ].flatMap((setting) => ["-c", setting]);
}

export function gitPushes(ctx: AppContext, log: Log, builder: Builder | undefined): GitPushes {
  const root = gitRoot(ctx.config.dataDir);
  const hooks = path.join(root, "hooks");
  writePreReceiveHook(hooks);
  // Without git the gateway still serves `balena ssh`; pushes are refused with the reason.
  execFile("git", ["--version"], { env: gitEnv(root), timeout: 10_000 }, (error) => {
    if (error) log.warn("ssh gateway: git is not installed (apt-get install git): git pushes will be refused");
  });
  const busy = new Set<number>();

  /** The fleet's bare repository, created on its first push (built aside, then moved into place). */
  async function repositoryOf(fleet: number): Promise<string> {
    const repository = fleetRepository(ctx.config.dataDir, fleet);
    if (fs.existsSync(path.join(repository, "HEAD"))) return repository;
    fs.mkdirSync(path.dirname(repository), { recursive: true });
    const aside = path.join(path.dirname(repository), `.new-${fleet}-${process.pid}-${Date.now()}`);
    const env = gitEnv(root);
    try {
      const steps = [
        ["init", "--bare", "--quiet", "--initial-branch=main", aside],
        ["--git-dir", aside, "config", "receive.denyNonFastForwards", "true"],
        ["--git-dir", aside, "config", "receive.denyDeletes", "true"],
      ];
      for (const args of steps) {
        const done = await git(args, { cwd: root, env });
        if (done.code !== 0) throw new Error(`git ${args[0]} failed: ${done.stderr.trim()}`);
      }
      fs.renameSync(aside, repository);
    } catch (error) {
      fs.rmSync(aside, { recursive: true, force: true });
      // Another push made it first.
      if (!fs.existsSync(path.join(repository, "HEAD"))) throw error;
    }
    return repository;
  }

  async function mayPush(caller: Caller, fleet: number) {
    return (
      (await mayDo(ctx.db, caller, "application.read", { fleet })) &&
      (await mayDo(ctx.db, caller, "application.push", { fleet }))
    );
  }

  async function run(caller: Caller, channel: ServerChannel, command: GitCommand) {
    if (command.kind === "refused") return refuse(channel, command.message);
    const fleet = await findFleet(ctx.db, command.name, command.owner);
    if (!fleet || !caller.user || !(await mayPush(caller, fleet.id))) {
      return refuse(channel, noPushRights(command.slug));
    }
    if (busy.has(fleet.id)) {
      return refuse(channel, `A push to ${command.slug} is already building; push again when it ended.`);
    }
    if (busy.size >= GIT_PUSH_LIMITS.concurrent) {
      return refuse(channel, "The server is building other pushes; push again in a minute.");
    }
    busy.add(fleet.id);
    try {
      await receive(caller, channel, fleet, command.slug);
    } finally {
      busy.delete(fleet.id);
    }
  }

  /** Runs `git receive-pack` for the channel and answers its hook; resolves when the push ended. */
  async function receive(caller: Caller, channel: ServerChannel, fleet: FleetToBuild, slug: string) {
    const repository = await repositoryOf(fleet.id);
    const child: ChildProcess = spawn("git", [...receivePackConfig(hooks), "receive-pack", repository], {
      cwd: repository,
      env: gitEnv(root),
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      // Its own process group: a stop ends the hook and git's helpers with it.
      detached: true,
    });
    const failed = new Promise<Error>((resolve) => child.on("error", resolve));
    if (child.pid === undefined) {
      log.error({ err: await failed }, "git push: git cannot be run (is Debian's git installed?)");
      return refuse(channel, "This server cannot take git pushes now (git is not installed on it).");
    }
    const aborted = new AbortController();
    let ended = false;
    const stop = () => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // It ended meanwhile.
        }
      }
    };
    const timedOut = (text: string) => () => {
      if (ended) return;
      if (!channel.destroyed) channel.stderr.write(`${text}\n`);
      aborted.abort();
      stop();
    };
    const uploadTimer = setTimeout(
      timedOut(`The push took more than ${duration(GIT_PUSH_LIMITS.uploadMs)} to upload; it was stopped.`),
      GIT_PUSH_LIMITS.uploadMs,
    );
    const pushTimer = setTimeout(
      timedOut(`The push took more than ${duration(GIT_PUSH_LIMITS.pushMs)}; it was stopped.`),
      GIT_PUSH_LIMITS.pushMs,
    );
    channel.on("close", () => {
      // The pusher went away: the build is cancelled, git stops.
      aborted.abort();
      stop();
    });

    const stdin = child.stdin;
    const stdout = child.stdout;
    const stderr = child.stderr;
    const hook = child.stdio[3] as Socket | null;
    if (!stdin || !stdout || !stderr || !hook) throw new Error("git receive-pack has no pipes");
    stdin.on("error", () => undefined);
    hook.on("error", () => undefined);
    channel.pipe(stdin);
    stdout.pipe(channel, { end: false });
    stderr.on("data", (chunk: Buffer) => {
      if (!channel.destroyed) channel.stderr.write(chunk);
    });

    let message = "";
    let heard = false;
    hook.setEncoding("utf8");
    hook.on("data", (chunk: string) => {
      if (heard) return;
      message += chunk;
      const end = message.indexOf("\n");
      if (end < 0 && message.length <= MAX_HOOK_MESSAGE_CHARS) return;
      heard = true;
      clearTimeout(uploadTimer);
      const say = (line: string) => {
        if (!hook.destroyed) hook.write(`${JSON.stringify({ line })}\n`);
      };
      const answer = (exit: number) => {
        if (!hook.destroyed) hook.end(`${JSON.stringify({ exit })}\n`);
      };
      const request = end < 0 ? undefined : parseHookMessage(message.slice(0, end));
      decide(caller, fleet, slug, repository, request, say, aborted.signal).then(
        (ok) => answer(ok ? 0 : 1),
        (error: unknown) => {
          log.error({ err: error, fleet: fleet.id }, "git push: the build could not run");
          say("error: the server could not build this push (internal error). Nothing was changed.");
          answer(1);
        },
      );
    });

    const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
    const drained = (stream: NodeJS.ReadableStream) => new Promise<void>((resolve) => stream.once("end", resolve));
    const [code] = await Promise.all([exited, drained(stdout), drained(stderr)]);
    ended = true;
    clearTimeout(uploadTimer);
    clearTimeout(pushTimer);
    hook.destroy();
    if (!channel.destroyed) {
      channel.exit(code);
      channel.end();
    }
  }

  /**
   * The hook's question: may these refs move? A push of main or master is built; true lets git
   * move the ref (the build succeeded, or the commit is already a successful release).
   */
  async function decide(
    caller: Caller,
    fleet: FleetToBuild,
    slug: string,
    repository: string,
    request: HookMessage | undefined,
    say: (line: string) => void,
    signal: AbortSignal,
  ): Promise<boolean> {
    const updates = request && parseRefUpdates(request.updates);
    if (!request || !updates) {
      say("error: the push could not be read. Nothing was changed.");
      return false;
    }
    const verdict = pushVerdict(updates);
    if ("refused" in verdict) {
      say(`error: ${verdict.refused}`);
      return false;
    }
    const update = verdict.build;
    const env = objectsEnv(repository, request.objects, root);
    const refusal = await updateProblem(repository, update, env);
    if (refusal) {
      say(`error: ${refusal}`);
      return false;
    }
    // The role may have changed while the objects arrived.
    if (!(await mayPush(caller, fleet.id))) {
      say(`error: ${noPushRights(slug)}`);
      return false;
    }
    const branch = update.ref.replace(/^refs\/heads\//, "");
    const built = await successfulReleaseOfCommit(ctx.db, fleet.id, update.new);
    if (built) {
      say(`${update.new} is already release ${built.raw_version} of ${slug}: nothing to build.`);
      return true;
    }
    say(`Building ${update.new} (${branch}) for ${slug}`);
    let archive: { file: string; files: Map<string, string>; stripTop: boolean };
    try {
      archive = await archiveOf(repository, update.new, env);
    } catch (error) {
      const text = error instanceof ProjectError || error instanceof FlotillaError ? error.message : undefined;
      if (!text) throw error;
      say(`error: ${text}`);
      say("The push was refused: nothing was changed.");
      return false;
    }
    try {
      const status = await runBuild(
        ctx.db,
        log,
        {
          fleet: fleet.id,
          user: caller.user?.id,
          files: archive.files,
          archive: { file: archive.file, stripTop: archive.stripTop },
          ...(builder ? { builder } : {}),
          draft: false,
          note: undefined,
          commit: update.new,
          signal,
        },
        (event) => {
          if (event.type === "log") say(event.message);
        },
      );
      const page = `${ctx.config.publicUrl}/fleets/${fleet.id}/releases/${status.id}`;
      if (status.status === "success") {
        await rollOut(ctx.db, ctx.devices, (task) => task(), { fleets: [fleet.id] });
        say(`Release ${status.raw_version} of ${slug} built from ${update.new}: ${page}`);
        return true;
      }
      say(`error: the build ended ${status.status}; ${branch} was not updated (${page})`);
      return false;
    } finally {
      removeArchive(archive.file);
    }
  }

  /** A commit git may move the ref to: an object of the push that is a commit, and a fast-forward. */
  async function updateProblem(repository: string, update: RefUpdate, env: NodeJS.ProcessEnv) {
    const type = await git(["cat-file", "-t", update.new], { cwd: repository, env });
    if (type.code !== 0 || type.stdout.trim() !== "commit")
      return `${update.new} is not a commit. Nothing was changed.`;
    if (isZero(update.old)) return undefined;
    const ancestor = await git(["merge-base", "--is-ancestor", update.old, update.new], { cwd: repository, env });
    if (ancestor.code === 0) return undefined;
    if (ancestor.code === 1) return nonFastForward(update.ref);
    throw new Error(`git merge-base failed: ${ancestor.stderr.trim()}`);
  }

  /** The pushed tree as a tar in the builds directory (`git archive`), and the project read from it. */
  async function archiveOf(repository: string, commit: string, env: NodeJS.ProcessEnv) {
    const child = spawn("git", ["archive", "--format=tar", commit], {
      cwd: repository,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), GIT_PUSH_LIMITS.stepMs);
    const exited = new Promise<number>((resolve) => child.once("close", (code) => resolve(code ?? 1)));
    const tooLarge = () =>
      new ProjectError(`The pushed tree is larger than ${PROJECT_MAX_UNPACKED_BYTES / 1024 / 1024} MiB`);
    let file: string | undefined;
    try {
      file = await spoolArchive(child.stdout.pipe(byteCap(PROJECT_MAX_UNPACKED_BYTES, tooLarge)), ctx.config.dataDir);
    } catch (error) {
      child.kill("SIGKILL");
      await exited;
      throw error;
    } finally {
      clearTimeout(timer);
    }
    const code = await exited;
    if (code !== 0) {
      removeArchive(file);
      throw new Error(`git archive failed: ${errors.trim()}`);
    }
    try {
      const { files, stripTop } = await readProject(fs.createReadStream(file));
      return { file, files, stripTop };
    } catch (error) {
      removeArchive(file);
      throw error;
    }
  }

  async function prune() {
    const dir = path.join(root, "fleets");
    if (!fs.existsSync(dir)) return;
    const names = fs.readdirSync(dir);
    const ids = names.map((name) => /^(\d{1,9})\.git$/.exec(name)?.[1]).filter((id) => id !== undefined);
    const { rows } = await ctx.db.query<{ id: number }>(`SELECT id FROM "application" WHERE id = ANY($1::int[])`, [
      ids.map(Number),
    ]);
    const alive = new Set(rows.map((row) => Number(row.id)));
    for (const name of names) {
      const id = /^(\d{1,9})\.git$/.exec(name)?.[1];
      const stale = id === undefined ? name.startsWith(".new-") : !alive.has(Number(id)) && !busy.has(Number(id));
      if (stale) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    }
  }

  return { run, prune };
}

type HookMessage = { updates: string; objects: string | null };

function parseHookMessage(text: string): HookMessage | undefined {
  try {
    const value = JSON.parse(text) as { updates?: unknown; objects?: unknown };
    if (typeof value.updates !== "string") return undefined;
    return { updates: value.updates, objects: typeof value.objects === "string" ? value.objects : null };
  } catch {
    return undefined;
  }
}

/**
 * git's environment to read the pushed objects while they wait in the quarantine git made for
 * them: only a quarantine directory of this repository's own (`objects/tmp_objdir-incoming-*`)
 * is taken from the hook; otherwise the repository's objects alone.
 */
export function objectsEnv(repository: string, objects: string | null, home: string): NodeJS.ProcessEnv {
  const own = path.join(repository, "objects");
  const resolved = objects ? path.resolve(repository, objects) : undefined;
  const quarantine =
    resolved &&
    path.dirname(resolved) === own &&
    /^tmp_objdir-incoming-[A-Za-z0-9]{1,32}$/.test(path.basename(resolved)) &&
    fs.existsSync(resolved)
      ? resolved
      : undefined;
  return gitEnv(home, {
    GIT_DIR: repository,
    ...(quarantine ? { GIT_OBJECT_DIRECTORY: quarantine, GIT_ALTERNATE_OBJECT_DIRECTORIES: own } : {}),
  });
}

/** Tells the pusher why on stderr (git prints it) and ends the channel with status 1. */
function refuse(channel: ServerChannel, message: string) {
  if (channel.destroyed) return;
  channel.stderr.write(`${message}\n`);
  channel.exit(1);
  channel.end();
}
