import { describe, expect, it } from "vitest";
import { parseScript } from "./script.ts";
import { execSandboxed, resolvePath, type SandboxContext, SandboxShell } from "./shell.ts";

const UUID = "0123456789abcdef0123456789abcdef";

function shell(overrides: Partial<SandboxContext> = {}) {
  let output = "";
  let exited = 0;
  const sh = new SandboxShell(
    {
      uuid: UUID,
      target: "host",
      osVersion: () => "balenaOS 6.1.0",
      uptimeSeconds: () => 3725.5,
      now: () => new Date("2026-03-01T12:34:56Z"),
      environment: {},
      services: ["main"],
      ...overrides,
    },
    { output: (data) => (output += data), exit: () => (exited += 1) },
  );
  sh.start();
  return {
    sh,
    /** Types a line and answers what the shell wrote for it (echo, output and the next prompt). */
    type(text: string) {
      output = "";
      sh.write(text);
      return output;
    },
    get exited() {
      return exited;
    },
  };
}

/** The output of a command: what follows the echoed line, without the next prompt. */
const run = (s: ReturnType<typeof shell>, line: string) => {
  const out = s.type(`${line}\r`);
  return out.slice(line.length + 2, out.length - s.sh.promptText.length);
};

describe("sandboxed shell: line editor", () => {
  it("greets with a host prompt of the short uuid", () => {
    let output = "";
    const sh = new SandboxShell(
      {
        uuid: UUID,
        target: "host",
        osVersion: () => "balenaOS 6.1.0",
        uptimeSeconds: () => 1,
        now: () => new Date(),
        environment: {},
        services: [],
      },
      { output: (data) => (output += data), exit: () => {} },
    );
    sh.start();
    expect(output.endsWith("root@0123456:~# ")).toBe(true);
  });

  it("echoes printable characters, erases with backspace, runs on Enter", () => {
    const s = shell();
    expect(s.type("ecx")).toBe("ecx");
    expect(s.type("\x7f")).toBe("\b \b");
    expect(s.type("ho hello\r")).toBe("ho hello\r\nhello\r\nroot@0123456:~# ");
  });

  it("Ctrl-C drops the line with ^C; arrow keys are ignored; CRLF is one Enter", () => {
    const s = shell();
    s.type("echo nope");
    expect(s.type("\x03")).toBe("^C\r\nroot@0123456:~# ");
    expect(s.type("\x1b[A\x1b[D")).toBe("");
    expect(s.type("pwd\r\n")).toBe("pwd\r\n/root\r\nroot@0123456:~# ");
  });

  it("Ctrl-D exits on an empty line only; exit exits", () => {
    const s = shell();
    s.type("ls");
    s.type("\x04");
    expect(s.exited).toBe(0);
    s.type("\x03\x04");
    expect(s.exited).toBe(1);
    const t = shell();
    t.type("exit\r");
    expect(t.exited).toBe(1);
  });
});

describe("sandboxed shell: commands", () => {
  it("echo keeps quoted spaces and expands variables", () => {
    const s = shell();
    expect(run(s, `echo "a  b" 'c $HOME' $HOME`)).toBe("a  b c $HOME /root\r\n");
    expect(run(s, "echo -n hi")).toBe("hi");
    expect(run(s, `echo "x;y"; echo z`)).toBe("x;y\r\nz\r\n");
    expect(run(s, `echo "open`)).toBe("sh: syntax error: unterminated quoted string\r\n");
  });

  it("cd, pwd and ls walk the virtual filesystem", () => {
    const s = shell();
    expect(run(s, "cd /etc")).toBe("");
    expect(s.sh.promptText).toBe("root@0123456:/etc# ");
    expect(run(s, "ls")).toBe("hostname  hosts  os-release\r\n");
    expect(run(s, "cd ../proc && pwd")).toBe("/proc\r\n");
    expect(run(s, "cd /nowhere")).toBe("sh: cd: can't cd to /nowhere: No such file or directory\r\n");
    expect(run(s, "cd ~ && pwd")).toBe("/root\r\n");
    expect(run(s, "ls /missing")).toBe("ls: /missing: No such file or directory\r\n");
  });

  it("cat reads os-release from the simulated OS version, hostname and uptime", () => {
    const s = shell({ osVersion: () => "balenaOS 5.3.1" });
    expect(run(s, "cat /etc/os-release")).toContain('PRETTY_NAME="balenaOS 5.3.1"');
    expect(run(s, "cat /etc/hostname")).toBe("0123456\r\n");
    expect(run(s, "cat /proc/uptime")).toMatch(/^3725\.50 /);
    expect(run(s, "cat /etc")).toBe("cat: read error: Is a directory\r\n");
    expect(run(s, "cat /etc/shadow")).toBe("cat: can't open '/etc/shadow': No such file or directory\r\n");
  });

  it("answers hostname, uname -a, whoami, date and uptime from the device", () => {
    const s = shell();
    expect(run(s, "hostname")).toBe("0123456\r\n");
    expect(run(s, "uname -a")).toBe("Linux 0123456 6.1.77 #1 SMP PREEMPT aarch64 GNU/Linux\r\n");
    expect(run(s, "whoami")).toBe("root\r\n");
    expect(run(s, "date")).toBe("Sun, 01 Mar 2026 12:34:56 UTC\r\n");
    expect(run(s, "uptime")).toBe(" 12:34:56 up 1:02,  load average: 0.12, 0.08, 0.05\r\n");
  });

  it("a service shell starts in /usr/src/app and its env holds the service's variables", () => {
    const s = shell({ target: "worker", environment: { GREETING: "hello there" } });
    expect(s.sh.promptText).toBe("root@worker:/usr/src/app# ");
    const env = run(s, "env");
    expect(env).toContain("GREETING=hello there\r\n");
    expect(env).toContain("BALENA_SERVICE_NAME=worker\r\n");
    expect(run(s, "echo $GREETING")).toBe("hello there\r\n");
    expect(run(s, "ls")).toBe("package.json  start.sh\r\n");
  });

  it("stty size follows resizes", () => {
    const s = shell();
    expect(run(s, "stty size")).toBe("24 80\r\n");
    s.sh.resize(132, 43);
    expect(run(s, "stty size")).toBe("43 132\r\n");
  });

  it("clear clears the screen; an unknown command is not found", () => {
    const s = shell();
    expect(run(s, "clear")).toBe("\x1b[H\x1b[2J");
    expect(run(s, "rm -rf /")).toBe("sh: rm: not found\r\n");
    expect(run(s, "")).toBe("");
  });
});

describe("shell helpers", () => {
  it("resolves paths", () => {
    expect(resolvePath("/root", "..", "/root")).toBe("/");
    expect(resolvePath("/usr/src", "./app//x/../", "/root")).toBe("/usr/src/app");
    expect(resolvePath("/etc", "~/a", "/root")).toBe("/root/a");
  });
  it("parses words, lists, pipelines and redirections outside quotes", () => {
    const words = (line: string) => {
      const parsed = parseScript(line);
      return "items" in parsed ? parsed.items.map((item) => item.pipeline.map((c) => c.words)) : parsed.error;
    };
    expect(words(`a "b c" d\\ e`)).toEqual([[["a", "b c", "d e"]]]);
    expect(words(`echo 'a;b' ; ls && pwd | wc -l`)).toEqual([[["echo", "a;b"]], [["ls"]], [["pwd"], ["wc", "-l"]]]);
    expect(parseScript(`ls > out 2>&1 < in`)).toEqual({
      items: [
        {
          when: ";",
          pipeline: [
            {
              words: ["ls"],
              redirects: [
                { fd: 1, to: "out", append: false },
                { fd: 2, toStdout: true },
                { fd: 0, from: "in" },
              ],
            },
          ],
        },
      ],
    });
    expect(words(`echo "open`)).toBe("syntax error: unterminated quoted string");
    expect(words(`&& ls`)).toBe("syntax error: unexpected &&");
    expect(words(`(ls)`)).toBe("( is not supported in the sandboxed shell");
  });
});

describe("lines run as sh -c runs them", () => {
  it("short-circuits && and ||, and $? is the status of the command before", () => {
    const s = shell();
    expect(run(s, "false && echo no; echo $?")).toBe("1\r\n");
    expect(run(s, "false || echo yes")).toBe("yes\r\n");
    expect(run(s, "true && echo yes || echo no")).toBe("yes\r\n");
    expect(run(s, "cd /nowhere 2>/dev/null || echo 'could not cd'")).toBe("could not cd\r\n");
  });

  it("pipes output through grep, wc, head, tail and sort", () => {
    const s = shell();
    expect(run(s, "cat /etc/os-release | grep VERSION_ID")).toBe('VERSION_ID="6.1.0"\r\n');
    expect(run(s, "cat /etc/os-release | grep -c =")).toBe("8\r\n");
    expect(run(s, "ls /etc | sort -r | head -n 1")).toBe("os-release\r\n");
    expect(run(s, "printenv HOME | wc -c")).toBe("6\r\n");
    expect(run(s, "echo a b c | wc -w")).toBe("3\r\n");
    expect(run(s, "ls /etc | tail -1")).toBe("os-release\r\n");
    // grep's status: 1 when nothing matched.
    expect(run(s, "ls /etc | grep nothing; echo $?")).toBe("1\r\n");
  });

  it("redirects into the sandbox's own files, appends, and reads them back", () => {
    const s = shell();
    expect(run(s, "echo one > /tmp/notes && echo two >> /tmp/notes")).toBe("");
    expect(run(s, "cat /tmp/notes")).toBe("one\r\ntwo\r\n");
    expect(run(s, "grep two < /tmp/notes")).toBe("two\r\n");
    expect(run(s, "cat /nowhere 2> /tmp/err; cat /tmp/err")).toBe(
      "cat: can't open '/nowhere': No such file or directory\r\n",
    );
    expect(run(s, "ls /missing > /tmp/both 2>&1; cat /tmp/both")).toBe("ls: /missing: No such file or directory\r\n");
    expect(run(s, "echo x > /proc/uptime")).toBe("sh: can't create /proc/uptime: Read-only file system\r\n");
    expect(run(s, "echo x > /no/such/file")).toBe("sh: can't create /no/such/file: nonexistent directory\r\n");
  });

  it("runs a bulk command with separate streams and the last status as its exit code", async () => {
    const context: SandboxContext = {
      uuid: UUID,
      target: "host",
      osVersion: () => "balenaOS 6.1.0",
      uptimeSeconds: () => 1,
      now: () => new Date(),
      environment: {},
      services: [],
    };
    const out: Record<string, string> = { stdout: "", stderr: "" };
    const code = await new Promise<number | null>((resolve) => {
      execSandboxed(context, "echo 'a|b' | grep b && cat /missing\nsleep 0.01; exit 3", {
        output: (data, stream) => (out[stream] += data),
        exit: (exitCode) => resolve(exitCode),
      });
    });
    expect(out).toEqual({ stdout: "a|b\n", stderr: "cat: can't open '/missing': No such file or directory\n" });
    expect(code).toBe(3);
  });
});
