import type { ExecEvents, Execution } from "../exec.ts";
import type { Shell, ShellEvents } from "../terminal.ts";
import { type Command, expandWord, parseScript } from "./script.ts";

/**
 * The simulator's terminal: a sandboxed shell written in TypeScript. It never runs a process on
 * the machine; its commands read a small virtual filesystem made from the simulated device
 * (os-release from its OS version, hostname, uptime, the service's environment). A line runs as
 * `sh -c` runs it (script.ts: quoting, `;`, `&&`, `||`, pipes, redirections, `$?`), on builtins
 * only; files it writes live in the sandbox's memory. A line editor echoes what is typed:
 * printable characters, backspace, Enter, Ctrl-C (^C), Ctrl-D (exit on an empty line), Ctrl-L.
 */

export type SandboxContext = {
  uuid: string;
  /** `host`, or the service the shell runs "in". */
  target: string;
  osVersion: () => string;
  /** Seconds since the simulated device booted. */
  uptimeSeconds: () => number;
  now: () => Date;
  /** The service's environment from its target state (empty for the host). */
  environment: Record<string, string>;
  services: string[];
};

type Node = { kind: "dir" } | { kind: "file"; content: () => string };

const HOST_HOME = "/root";
const APP_DIR = "/usr/src/app";

const file = (text: string | (() => string)): Node => ({
  kind: "file",
  content: typeof text === "string" ? () => text : text,
});

/** The virtual filesystem: every path of the device, directories included. */
function filesystem(ctx: SandboxContext): Map<string, Node> {
  const short = ctx.uuid.slice(0, 7);
  const hostname = ctx.target === "host" ? short : ctx.target;
  const [name, version] = (() => {
    const match = /^(\S+)\s+v?(\d[\w.+-]*)/.exec(ctx.osVersion());
    return match ? [match[1] ?? "balenaOS", match[2] ?? "0.0.0"] : ["balenaOS", ctx.osVersion()];
  })();
  const nodes = new Map<string, Node>();
  const dirs = [
    "/",
    "/etc",
    "/proc",
    "/tmp",
    "/var",
    "/var/log",
    "/mnt",
    "/mnt/data",
    "/usr",
    "/usr/src",
    "/root",
    "/bin",
    "/dev",
  ];
  for (const dir of dirs) nodes.set(dir, { kind: "dir" });
  nodes.set(
    "/etc/os-release",
    file(
      () =>
        `ID="balena-os"\nNAME="${name}"\nVERSION="${version}"\nVERSION_ID="${version}"\nPRETTY_NAME="${name} ${version}"\nMACHINE="raspberrypi4-64"\nVARIANT="Production"\nVARIANT_ID=prod\n`,
    ),
  );
  nodes.set("/etc/hostname", file(`${hostname}\n`));
  nodes.set("/etc/hosts", file(`127.0.0.1\tlocalhost\n127.0.1.1\t${hostname}\n`));
  nodes.set(
    "/proc/uptime",
    file(() => {
      const up = ctx.uptimeSeconds();
      return `${up.toFixed(2)} ${(up * 3.6).toFixed(2)}\n`;
    }),
  );
  nodes.set("/proc/version", file(`Linux version 6.1.77 (oe-user@oe-host) #1 SMP PREEMPT ${name} ${version}\n`));
  nodes.set("/dev/null", file(""));
  nodes.set("/var/log/messages", file("flotilla simulated device: no system log kept here\n"));
  nodes.set("/mnt/data/README", file("Persistent data of the device's services lives here.\n"));
  for (const command of ["sh", "ls", "cat", "echo"]) nodes.set(`/bin/${command}`, file("\u007fELF (sandboxed)\n"));
  if (ctx.target !== "host") {
    nodes.set(APP_DIR, { kind: "dir" });
    nodes.set(`${APP_DIR}/package.json`, file(`{\n  "name": "${ctx.target}",\n  "private": true\n}\n`));
    nodes.set(`${APP_DIR}/start.sh`, file(`#!/bin/sh\nexec node index.js\n`));
  }
  return nodes;
}

/** Resolves `path` against `cwd`: `~`, `.`, `..`, repeated slashes. */
export function resolvePath(cwd: string, path: string, home: string): string {
  const expanded = path === "~" ? home : path.startsWith("~/") ? `${home}${path.slice(1)}` : path;
  const parts = (expanded.startsWith("/") ? expanded : `${cwd}/${expanded}`).split("/");
  const out: string[] = [];
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

export class SandboxShell implements Shell {
  private line = "";
  private cwd: string;
  private readonly home: string;
  private readonly nodes: Map<string, Node>;
  private readonly env: Record<string, string>;
  private closed = false;
  /** Bytes of an escape sequence (arrow keys) being skipped. */
  private escape = "";
  private lastWasCr = false;
  /** The exit status of the last command (`$?`, and a bulk command's exit code). */
  status = 0;
  /** Where the running command reads and writes: its pipe, its redirections, or the terminal. */
  private io: { input: string; tty: boolean; out(text: string): void; err(text: string): void } = {
    input: "",
    tty: true,
    out: (text) => this.toTerminal(text),
    err: (text) => this.toTerminal(text, true),
  };
  cols: number;
  rows: number;

  constructor(
    private readonly ctx: SandboxContext,
    private readonly events: ShellEvents & {
      /** A bulk command's standard error (a terminal shows both streams as one). */
      errorOutput?(data: string): void;
    },
    size: { cols: number; rows: number } = { cols: 80, rows: 24 },
  ) {
    this.cols = size.cols;
    this.rows = size.rows;
    this.home = HOST_HOME;
    this.cwd = ctx.target === "host" ? HOST_HOME : APP_DIR;
    this.nodes = filesystem(ctx);
    this.env = {
      PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      HOME: HOST_HOME,
      HOSTNAME: this.hostname,
      SHELL: "/bin/sh",
      TERM: "xterm-256color",
      USER: "root",
      ...(ctx.target === "host"
        ? {}
        : {
            BALENA: "1",
            BALENA_SERVICE_NAME: ctx.target,
            BALENA_DEVICE_UUID: ctx.uuid,
            ...ctx.environment,
          }),
    };
  }

  /** Writes the greeting and the first prompt. */
  start() {
    const what = this.ctx.target === "host" ? "the host OS" : `the ${this.ctx.target} service`;
    this.print(`Connected to ${what} of ${this.ctx.uuid.slice(0, 7)} (simulated device, sandboxed shell).\n`);
    this.print(`Type help for the commands.\n`);
    this.prompt();
  }

  get hostname() {
    return this.ctx.target === "host" ? this.ctx.uuid.slice(0, 7) : this.ctx.target;
  }

  get promptText() {
    const where = this.cwd === this.home ? "~" : this.cwd;
    return `root@${this.hostname}:${where}# `;
  }

  write(data: string) {
    for (const c of data) {
      if (this.closed) return;
      this.key(c);
    }
  }

  resize(cols: number, rows: number) {
    this.cols = cols;
    this.rows = rows;
  }

  close() {
    this.closed = true;
  }

  /** The shell was left (`exit`, Ctrl-D). */
  get exited() {
    return this.closed;
  }

  private key(c: string) {
    if (this.escape) {
      this.escape += c;
      // CSI sequences end with a letter or ~; a lone ESC followed by something else ends too.
      if (/[A-Za-z~]/.test(c) || (this.escape.length === 2 && c !== "[" && c !== "O")) this.escape = "";
      return;
    }
    const wasCr = this.lastWasCr;
    this.lastWasCr = c === "\r";
    switch (c) {
      case "\x1b":
        this.escape = c;
        return;
      case "\n":
        if (wasCr) return;
        this.enter();
        return;
      case "\r":
        this.enter();
        return;
      case "\x7f":
      case "\b":
        if (this.line.length === 0) return;
        this.line = this.line.slice(0, -1);
        this.events.output("\b \b");
        return;
      case "\x03":
        this.line = "";
        this.events.output("^C\r\n");
        this.prompt();
        return;
      case "\x04":
        if (this.line.length > 0) return;
        this.print("exit\n");
        this.exit();
        return;
      case "\x0c":
        this.events.output("\x1b[H\x1b[2J");
        this.events.output(this.promptText + this.line);
        return;
      default:
        if (c < " ") return;
        this.line += c;
        this.events.output(c);
    }
  }

  private enter() {
    const line = this.line;
    this.line = "";
    this.events.output("\r\n");
    this.run(line);
    if (!this.closed) this.prompt();
  }

  private prompt() {
    this.events.output(this.promptText);
  }

  private toTerminal(text: string, error = false) {
    if (!text) return;
    const lines = text.replace(/\r?\n/g, "\r\n");
    if (error && this.events.errorOutput) this.events.errorOutput(lines);
    else this.events.output(lines);
  }

  /** The command's output (its pipe, its redirection or the terminal). */
  private print(text: string) {
    this.io.out(text);
  }

  /** Prints an error; the command failed (status 1). */
  private fail(text: string) {
    this.io.err(text);
    this.status = 1;
  }

  private exit() {
    this.closed = true;
    this.events.exit();
  }

  /** Runs one line; a `sleep` returns at once (bulk commands wait: `execSandboxed`). */
  run(line: string) {
    for (const _ of this.script(line)) {
      // Interactive: no waiting.
    }
  }

  /** Runs one line as `sh -c` does; yields the seconds of each `sleep`. */
  *script(line: string): Generator<number, void, void> {
    const parsed = parseScript(line);
    if ("error" in parsed) {
      this.toTerminal(`sh: ${parsed.error}\n`, true);
      this.status = 2;
      return;
    }
    for (const item of parsed.items) {
      if (this.closed) return;
      if ((item.when === "&&" && this.status !== 0) || (item.when === "||" && this.status === 0)) continue;
      yield* this.pipeline(item.pipeline);
    }
  }

  /** Each command's output is the next one's input; the last one's goes to the terminal. */
  private *pipeline(commands: Command[]): Generator<number, void, void> {
    let input = "";
    for (const [index, command] of commands.entries()) {
      if (this.closed) return;
      const value = (name: string) =>
        name === "?" ? String(this.status) : name === "PWD" ? this.cwd : (this.env[name] ?? "");
      const words = command.words.map((word) => expandWord(word, value));
      let stdout = "";
      let stderr = "";
      const from = command.redirects.find((r) => "from" in r);
      const read = from && "from" in from ? this.readFile(expandWord(from.from, value)) : input;
      this.status = 0;
      if (read === undefined) {
        stderr = `sh: can't open ${from && "from" in from ? from.from : ""}: no such file\n`;
        this.status = 1;
      } else {
        // Output that reaches the terminal is laid out for it (ls in columns), else one item a line.
        const tty = index === commands.length - 1 && !command.redirects.some((r) => "to" in r && r.fd === 1);
        this.io = { input: read, tty, out: (text) => (stdout += text), err: (text) => (stderr += text) };
        try {
          if (words[0] === "sleep") {
            const seconds = Number(words[1]);
            if (!Number.isFinite(seconds) || seconds < 0) this.fail(`sleep: invalid number '${words[1] ?? ""}'\n`);
            else yield seconds;
          } else if (words.length > 0) this.command(words[0] as string, words.slice(1));
        } finally {
          this.io = {
            input: "",
            tty: true,
            out: (text) => this.toTerminal(text),
            err: (text) => this.toTerminal(text, true),
          };
        }
      }
      for (const redirect of command.redirects) {
        if ("toStdout" in redirect) {
          stdout += stderr;
          stderr = "";
        } else if ("to" in redirect) {
          const written = this.writeFile(
            expandWord(redirect.to, value),
            redirect.fd === 1 ? stdout : stderr,
            redirect.append,
          );
          if (written) {
            stderr += written;
            this.status = 1;
          }
          if (redirect.fd === 1) stdout = "";
          else stderr = "";
        }
      }
      this.toTerminal(stderr, true);
      if (index === commands.length - 1) this.toTerminal(stdout);
      else input = stdout;
    }
  }

  /** A file's text for `<` (`/dev/null` is empty); undefined when there is no such file. */
  private readFile(path: string): string | undefined {
    const node = this.node(resolvePath(this.cwd, path, this.home));
    return node?.kind === "file" ? node.content() : undefined;
  }

  /** Writes `>`/`>>` into the sandbox's memory; the error text when it cannot. */
  private writeFile(path: string, text: string, append: boolean): string | undefined {
    const target = resolvePath(this.cwd, path, this.home);
    if (target === "/dev/null") return undefined;
    const parent = target.slice(0, target.lastIndexOf("/")) || "/";
    const node = this.node(target);
    if (node?.kind === "dir") return `sh: can't create ${path}: Is a directory\n`;
    if (this.node(parent)?.kind !== "dir") return `sh: can't create ${path}: nonexistent directory\n`;
    if (target.startsWith("/proc/") || target.startsWith("/bin/"))
      return `sh: can't create ${path}: Read-only file system\n`;
    const before = append && node?.kind === "file" ? node.content() : "";
    this.nodes.set(target, file(before + text));
    return undefined;
  }

  private node(path: string) {
    return this.nodes.get(path);
  }

  private children(dir: string): string[] {
    const prefix = dir === "/" ? "/" : `${dir}/`;
    return [...this.nodes.keys()]
      .filter((path) => path !== dir && path.startsWith(prefix) && !path.slice(prefix.length).includes("/"))
      .map((path) => path.slice(prefix.length))
      .sort();
  }

  /** The text filters of pipelines: their input is the pipe's, or the files named. */
  private filter(name: "grep" | "wc" | "head" | "tail" | "sort", args: string[]) {
    const flags = args.filter((a) => /^-[a-zA-Z]+$/.test(a)).join("");
    const count = (() => {
      const n = args.find((a) => /^-\d+$/.test(a)) ?? args[args.indexOf("-n") + 1];
      return args.includes("-n") || /^-\d+$/.test(n ?? "") ? Math.abs(Number(n)) : 10;
    })();
    const operands = args.filter((a, i) => !a.startsWith("-") && args[i - 1] !== "-n");
    const pattern = name === "grep" ? operands[0] : undefined;
    const files = name === "grep" ? operands.slice(1) : operands;
    if (name === "grep" && pattern === undefined) return this.fail("usage: grep [-ivcn] PATTERN [FILE]...\n");
    let text = "";
    if (files.length === 0) text = this.io.input;
    for (const path of files) {
      const read = this.readFile(path);
      if (read === undefined) return this.fail(`${name}: ${path}: No such file or directory\n`);
      text += read;
    }
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    const joined = (list: string[]) => (list.length > 0 ? `${list.join("\n")}\n` : "");
    switch (name) {
      case "grep": {
        const needle = flags.includes("i") ? (pattern ?? "").toLowerCase() : (pattern ?? "");
        const matched = lines
          .map((line, i) => ({ line, i }))
          .filter(
            ({ line }) => (flags.includes("i") ? line.toLowerCase() : line).includes(needle) !== flags.includes("v"),
          );
        if (flags.includes("c")) this.print(`${matched.length}\n`);
        else this.print(joined(matched.map(({ line, i }) => (flags.includes("n") ? `${i + 1}:${line}` : line))));
        // grep's status: 1 when nothing matched.
        if (matched.length === 0) this.status = 1;
        return;
      }
      case "wc": {
        const counts = {
          l: String(lines.length),
          w: String(text.split(/\s+/).filter(Boolean).length),
          c: String(Buffer.byteLength(text)),
        };
        const wanted = (["l", "w", "c"] as const).filter((f) => flags.includes(f));
        this.print(`${(wanted.length > 0 ? wanted : (["l", "w", "c"] as const)).map((f) => counts[f]).join(" ")}\n`);
        return;
      }
      case "head":
        this.print(joined(lines.slice(0, count)));
        return;
      case "tail":
        this.print(joined(count === 0 ? [] : lines.slice(-count)));
        return;
      case "sort": {
        const sorted = [...lines].sort();
        this.print(joined(flags.includes("r") ? sorted.reverse() : sorted));
        return;
      }
    }
  }

  private command(name: string, args: string[]) {
    this.status = 0;
    const resolve = (path: string) => resolvePath(this.cwd, path, this.home);
    switch (name) {
      case "echo": {
        const noNewline = args[0] === "-n";
        this.print(`${(noNewline ? args.slice(1) : args).join(" ")}${noNewline ? "" : "\n"}`);
        return;
      }
      case "pwd":
        this.print(`${this.cwd}\n`);
        return;
      case "cd": {
        const target = resolve(args[0] ?? "~");
        const node = this.node(target);
        if (!node) this.fail(`sh: cd: can't cd to ${args[0]}: No such file or directory\n`);
        else if (node.kind !== "dir") this.fail(`sh: cd: can't cd to ${args[0]}: Not a directory\n`);
        else this.cwd = target;
        return;
      }
      case "ls": {
        const flags = args.filter((a) => a.startsWith("-")).join("");
        const paths = args.filter((a) => !a.startsWith("-"));
        for (const path of paths.length > 0 ? paths : ["."]) {
          const target = resolve(path);
          const node = this.node(target);
          if (!node) {
            this.fail(`ls: ${path}: No such file or directory\n`);
            continue;
          }
          if (paths.length > 1) this.print(`${path}:\n`);
          const names = node.kind === "dir" ? this.children(target) : [path];
          const all = flags.includes("a") && node.kind === "dir" ? [".", "..", ...names] : names;
          if (flags.includes("l")) {
            for (const entry of all) {
              const child = entry === "." || entry === ".." ? node : this.node(resolvePath(target, entry, this.home));
              const isDir = child?.kind === "dir";
              const size = child?.kind === "file" ? child.content().length : 4096;
              this.print(
                `${isDir ? "drwxr-xr-x" : "-rw-r--r--"}    1 root     root     ${String(size).padStart(8)} ${entry}\n`,
              );
            }
          } else if (all.length > 0) {
            this.print(`${all.join(this.io.tty ? "  " : "\n")}\n`);
          }
        }
        return;
      }
      case "cat": {
        if (args.length === 0) {
          this.print(this.io.input);
          return;
        }
        for (const path of args) {
          if (path === "-") {
            this.print(this.io.input);
            continue;
          }
          const node = this.node(resolve(path));
          if (!node) this.fail(`cat: can't open '${path}': No such file or directory\n`);
          else if (node.kind === "dir") this.fail(`cat: read error: Is a directory\n`);
          else this.print(node.content());
        }
        return;
      }
      case "hostname":
        this.print(`${this.hostname}\n`);
        return;
      case "whoami":
        this.print("root\n");
        return;
      case "id":
        this.print("uid=0(root) gid=0(root) groups=0(root)\n");
        return;
      case "uname": {
        const all = `Linux ${this.hostname} 6.1.77 #1 SMP PREEMPT aarch64 GNU/Linux`;
        const flag = args[0] ?? "-s";
        const answers: Record<string, string> = {
          "-a": all,
          "-s": "Linux",
          "-n": this.hostname,
          "-r": "6.1.77",
          "-m": "aarch64",
        };
        const answer = answers[flag];
        if (answer) this.print(`${answer}\n`);
        else this.fail(`uname: invalid option -- '${flag.replace(/^-+/, "")}'\n`);
        return;
      }
      case "date":
        this.print(`${this.ctx.now().toUTCString().replace("GMT", "UTC")}\n`);
        return;
      case "uptime": {
        const up = Math.floor(this.ctx.uptimeSeconds());
        const hours = Math.floor(up / 3600);
        const minutes = Math.floor((up % 3600) / 60);
        const time = this.ctx.now().toISOString().slice(11, 19);
        this.print(
          ` ${time} up ${hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}` : `${minutes} min`},  load average: 0.12, 0.08, 0.05\n`,
        );
        return;
      }
      case "env":
      case "printenv": {
        const env: Record<string, string> = { ...this.env, PWD: this.cwd };
        if (name === "printenv" && args.length > 0) {
          for (const key of args) if (key in env) this.print(`${env[key]}\n`);
          return;
        }
        for (const key of Object.keys(env).sort()) this.print(`${key}=${env[key]}\n`);
        return;
      }
      case "clear":
        this.events.output("\x1b[H\x1b[2J");
        return;
      case "stty":
        // `stty size` tells the terminal's rows and columns, as the last resize set them.
        if (args[0] === "size") this.print(`${this.rows} ${this.cols}\n`);
        else this.print(`speed 38400 baud; rows ${this.rows}; columns ${this.cols};\n`);
        return;
      case "true":
      case ":":
        return;
      case "false":
        this.status = 1;
        return;
      case "sleep":
        // Interactive: returns at once (execSandboxed waits for real).
        return;
      case "grep":
      case "wc":
      case "head":
      case "tail":
      case "sort":
        this.filter(name, args);
        return;
      case "help":
        this.print(
          "Commands: cat cd clear date echo env exit false grep head help hostname id ls printenv pwd sleep sort stty tail true uname uptime wc whoami\n" +
            "Lines run as sh -c runs them: quotes, ; && ||, pipes (|) and redirections (> >> < 2> 2>&1).\n",
        );
        return;
      case "exit":
      case "logout": {
        const code = Number(args[0] ?? 0);
        this.status = Number.isInteger(code) && code >= 0 && code <= 255 ? code : 2;
        this.exit();
        return;
      }
      default:
        this.print(`sh: ${name}: not found\n`);
        this.status = 127;
    }
  }
}

/** `sleep`'s longest wait in the sandbox (a bulk command's timeout bounds it anyway). */
const MAX_SLEEP_S = 3600;

/**
 * A bulk command in the sandbox (exec.ts): the lines run as `sh -c` runs them in a fresh
 * sandboxed shell, without prompt or echo; `sleep N` really waits (so timeouts and cancels can be
 * seen); errors go to standard error; the exit code is the last command's status.
 */
export function execSandboxed(ctx: SandboxContext, command: string, events: ExecEvents): Execution {
  let finished = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const forward = (stream: "stdout" | "stderr") => (data: string) => {
    if (!finished) events.output(data.replace(/\r\n/g, "\n"), stream);
  };
  const shell = new SandboxShell(ctx, {
    output: forward("stdout"),
    errorOutput: forward("stderr"),
    exit: () => undefined,
  });
  const lines = command.split(/\r?\n/);
  const script = (function* () {
    for (const line of lines) {
      if (shell.exited) return;
      yield* shell.script(line);
    }
  })();
  const done = (code: number | null, signal?: string) => {
    if (finished) return;
    finished = true;
    if (timer) clearTimeout(timer);
    events.exit(code, signal);
  };
  const step = () => {
    timer = undefined;
    if (finished) return;
    const next = script.next();
    if (next.done) return done(shell.status);
    timer = setTimeout(step, Math.min(next.value, MAX_SLEEP_S) * 1000);
  };
  // The caller holds the execution before any output arrives.
  setImmediate(step);
  return { kill: () => done(null, "SIGTERM") };
}
