import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { APP_VERSION } from "@flotilla/domain";
import { afterEach, describe, expect, it } from "vitest";
import { apiUrlOption, assetOption } from "./args.ts";
import { main, USAGE } from "./cli.ts";
import { checkAssets } from "./commands/push.ts";
import { UsageError } from "./errors.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-cli-args-"));
  dirs.push(dir);
  return dir;
};

/** Runs the CLI in-process with a config directory of its own; answers the exit code and what it printed. */
async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    env: { FLOTILLA_CONFIG_DIR: tempDir() },
    cwd: tempDir(),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("flotilla (argument handling)", () => {
  it("prints the usage and the version", async () => {
    expect(await run()).toEqual({ code: 0, out: USAGE, err: "" });
    expect(await run("--help")).toEqual({ code: 0, out: USAGE, err: "" });
    expect(await run("--version")).toEqual({ code: 0, out: APP_VERSION, err: "" });
    for (const name of ["login", "whoami", "logout", "push", "deploy", "releases", "rollout", "exec"])
      expect(USAGE).toContain(`  ${name} `);
  });

  it("answers an unknown command with the usage and exit code 2", async () => {
    const result = await run("pusj", "x");
    expect(result.code).toBe(2);
    expect(result.err).toContain('flotilla: unknown command "pusj"');
    expect(result.err).toContain("Usage: flotilla <command>");
    expect((await run("help", "nothing")).code).toBe(2);
  });

  it("prints a command's help with --help, -h or help <command>, without running it", async () => {
    const help = await run("push", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: flotilla push <fleet> \[dir\]/);
    expect((await run("push", "org/fleet", "-h")).out).toBe(help.out);
    expect((await run("help", "push")).out).toBe(help.out);
    // after --, --help is an argument
    expect((await run("push", "--", "--help")).err).toContain("has no docker-compose.yml");
  });

  it("refuses unknown options, missing and extra arguments with exit code 2 and the command's usage", async () => {
    const unknown = await run("push", "org/fleet", "--drat");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^flotilla push: Unknown option '--drat'/);
    expect(unknown.err).toContain("Usage: flotilla push");
    expect(await run("push")).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^flotilla push: missing the fleet/),
    });
    expect(await run("releases", "a", "b")).toMatchObject({
      code: 2,
      err: expect.stringContaining('unexpected argument "b"'),
    });
    expect(await run("push", "f", "--note")).toMatchObject({
      code: 2,
      err: expect.stringContaining("argument missing"),
    });
    expect(await run("push", "f", "--note", " ")).toMatchObject({
      code: 2,
      err: expect.stringContaining("--note needs a value"),
    });
    expect(await run("deploy", "f")).toMatchObject({
      code: 2,
      err: expect.stringContaining("--compose FILE is required"),
    });
    expect(await run("login", "--token", "k", "--web")).toMatchObject({
      code: 2,
      err: expect.stringContaining("use one of"),
    });
    expect(await run("login", "--api", "ftp://x")).toMatchObject({
      code: 2,
      err: expect.stringContaining("--api must be"),
    });
    expect(await run("whoami", "extra")).toMatchObject({ code: 2 });
  });

  it("asks to log in first, in one line and exit code 1", async () => {
    const project = tempDir();
    fs.writeFileSync(path.join(project, "Dockerfile"), "FROM alpine\n");
    for (const args of [["whoami"], ["push", "org/fleet", project], ["releases", "org/fleet"]]) {
      expect(await run(...args)).toEqual({ code: 1, out: "", err: "flotilla: Not logged in: run flotilla login" });
    }
    expect(await run("logout")).toEqual({ code: 0, out: "Not logged in.", err: "" });
  });

  it("checks a deploy's compose file before asking for a login", async () => {
    const dir = tempDir();
    const file = path.join(dir, "compose.yml");
    fs.writeFileSync(file, "services:\n  main:\n    build: .\n");
    const result = await run("deploy", "org/fleet", "--compose", file);
    expect(result.code).toBe(1);
    expect(result.err).toContain('service "main" has build:');
    expect(result.err).toContain("use flotilla push");
    expect((await run("deploy", "org/fleet", "--compose", path.join(dir, "nope.yml"))).err).toContain("no such file");
  });
});

describe("option values", () => {
  it("reads --asset FILE[:KEY]", () => {
    expect(assetOption("dist/firmware.bin")).toEqual({ file: "dist/firmware.bin", key: "firmware.bin" });
    expect(assetOption("dist/firmware.bin:fw")).toEqual({ file: "dist/firmware.bin", key: "fw" });
    expect(assetOption("C:\\out\\fw.bin")).toEqual({ file: "C:\\out\\fw.bin", key: "fw.bin" });
    expect(assetOption("a:b/c")).toEqual({ file: "a:b/c", key: "c" });
    expect(() => assetOption(":fw")).toThrow(UsageError);
    expect(() => assetOption("fw.bin:")).toThrow(/needs a key/);
  });

  it("checks asset files before the push: present, at most 5 MiB, keys unique", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "a.txt"), "a");
    fs.writeFileSync(path.join(dir, "big.bin"), Buffer.alloc(5 * 1024 * 1024 + 1));
    expect(checkAssets(["a.txt", "a.txt:other"], dir)).toEqual([
      { file: path.join(dir, "a.txt"), key: "a.txt", size: 1 },
      { file: path.join(dir, "a.txt"), key: "other", size: 1 },
    ]);
    expect(() => checkAssets(["a.txt", "a.txt"], dir)).toThrow('two --asset options have the key "a.txt"');
    expect(() => checkAssets(["missing.txt"], dir)).toThrow("--asset missing.txt: no such file");
    expect(() => checkAssets(["big.bin"], dir)).toThrow(/at most 5 MiB/);
  });

  it("normalises --api", () => {
    expect(apiUrlOption("http://localhost:8081/")).toBe("http://localhost:8081");
    expect(apiUrlOption("https://api.example.com/base/")).toBe("https://api.example.com/base");
    expect(() => apiUrlOption("localhost:8081")).toThrow(UsageError);
    expect(() => apiUrlOption("http://user:pw@host")).toThrow(UsageError);
  });
});
