import type { ExecEvents, Execution } from "../exec.ts";
import type { Shell, ShellEvents } from "../terminal.ts";

/**
 * The simulator's terminal: a sandboxed shell written in TypeScript. It never runs a process on
 * the machine; its commands read a small virtual filesystem made from the simulated device
 * (os-release from its OS version, hostname, uptime, the service's environment). A line editor
 * echoes what is typed: printable characters, backspace, Enter, Ctrl-C (^C), Ctrl-D (exit on an
 * empty line), Ctrl-L (clear).
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

/**
 * Splits a command line into words: single quotes keep everything, double quotes expand `$VAR`,
 * a backslash escapes the next character. Answers undefined for an unterminated quote.
 */
export function parseLine(line: string, env: Record<string, string>): string[] | undefined {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
      continue;
    }
    if (c === "$") {
      const match = /^\$(?:\{(\w+)\}|(\w+)|(\?))/.exec(line.slice(i));
      if (match) {
        word += match[3] ? (env["?"] ?? "0") : (env[match[1] ?? match[2] ?? ""] ?? "");
        i += match[0].length - 1;
        inWord = true;
        continue;
      }
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === " " || c === "\t") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return undefined;
  if (inWord) words.push(word);
  return words;
}

/** Splits a line at `;` and `&&` that stand outside quotes. */
export function splitCommands(line: string): string[] {
  const parts: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === ";" || (c === "&" && line[i + 1] === "&")) {
      parts.push(line.slice(start, i));
      if (c === "&") i++;
      start = i + 1;
    }
  }
  parts.push(line.slice(start));
  return parts;
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
  cols: number;
  rows: number;

  constructor(
    private readonly ctx: SandboxContext,
    private readonly events: ShellEvents,
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

  private print(text: string) {
    if (text) this.events.output(text.replace(/\r?\n/g, "\r\n"));
  }

  /** Prints an error; the command failed (status 1). */
  private fail(text: string) {
    this.print(text);
    this.status = 1;
  }

  private exit() {
    this.closed = true;
    this.events.exit();
  }

  /** Runs one line: commands separated by `;` or `&&` outside quotes. */
  run(line: string) {
    for (const part of splitCommands(line)) {
      if (this.closed) return;
      const words = parseLine(part.trim(), { ...this.env, PWD: this.cwd, "?": String(this.status) });
      if (words === undefined) {
        this.print("sh: syntax error: unterminated quoted string\n");
        return;
      }
      if (words.length > 0) this.command(words[0] as string, words.slice(1));
    }
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
            this.print(`${all.join("  ")}\n`);
          }
        }
        return;
      }
      case "cat": {
        if (args.length === 0) return;
        for (const path of args) {
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
      case "help":
        this.print(
          "Commands: cat cd clear date echo env exit false help hostname id ls printenv pwd sleep stty true uname uptime whoami\n",
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
 * A bulk command in the sandbox (exec.ts): the line runs in a fresh sandboxed shell, without
 * prompt or echo; `sleep N` really waits (so timeouts and cancels can be seen); the exit code
 * is the last command's status. `;` and `&&` both just sequence.
 */
export function execSandboxed(ctx: SandboxContext, command: string, events: ExecEvents): Execution {
  let finished = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const shell = new SandboxShell(ctx, {
    output: (data) => {
      if (!finished) events.output(data.replace(/\r\n/g, "\n"), "stdout");
    },
    exit: () => undefined,
  });
  const parts = command.split(/\r?\n/).flatMap((line) => splitCommands(line));
  const done = (code: number | null, signal?: string) => {
    if (finished) return;
    finished = true;
    if (timer) clearTimeout(timer);
    events.exit(code, signal);
  };
  const step = (index: number) => {
    timer = undefined;
    for (let i = index; i < parts.length; i++) {
      if (finished) return;
      if (shell.exited) break;
      const words = parseLine((parts[i] as string).trim(), {});
      if (words?.[0] === "sleep") {
        const seconds = Number(words[1]);
        if (!Number.isFinite(seconds) || seconds < 0) {
          events.output(`sleep: invalid number '${words[1] ?? ""}'\n`, "stderr");
          shell.status = 1;
          continue;
        }
        timer = setTimeout(() => step(i + 1), Math.min(seconds, MAX_SLEEP_S) * 1000);
        return;
      }
      shell.run(parts[i] as string);
    }
    done(shell.status);
  };
  // The caller holds the execution before any output arrives.
  setImmediate(() => step(0));
  return { kill: () => done(null, "SIGTERM") };
}
