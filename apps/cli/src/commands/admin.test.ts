import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../cli.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-cli-admin-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function run(env: Record<string, string>, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    env: { FLOTILLA_CONFIG_DIR: dir, ...env },
    cwd: dir,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/**
 * `flotilla admin …` hands over to the server package's `flotilla-server admin …` on the server
 * host (its own test, apps/server/test/admin-command.test.ts, runs the real one).
 */
describe("flotilla admin", () => {
  it("runs flotilla-server admin from the PATH with the same arguments and environment, and its exit code", async () => {
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    const fake = path.join(bin, "flotilla-server");
    fs.writeFileSync(
      fake,
      `#!/usr/bin/env node
console.log(JSON.stringify(process.argv.slice(2)));
console.log("data dir " + process.env.FLOTILLA_DATA_DIR);
console.error("a warning");
process.exit(3);
`,
    );
    fs.chmodSync(fake, 0o755);
    const answer = await run(
      { PATH: `/nonexistent${path.delimiter}${bin}`, FLOTILLA_DATA_DIR: "/srv/flotilla" },
      "admin",
      "grant-role",
      "alice@example.com",
      "support_agent",
    );
    expect(answer).toEqual({
      code: 3,
      out: '["admin","grant-role","alice@example.com","support_agent"]\ndata dir /srv/flotilla',
      err: "a warning",
    });
  });

  it("says where to run it when the server is not installed here", async () => {
    const answer = await run({ PATH: "/nonexistent" }, "admin", "list-roles");
    expect(answer.code).toBe(1);
    expect(answer.err).toBe(
      "flotilla: flotilla admin runs on the server host: flotilla-server is not installed here (not on the PATH). Run it where the server runs (npx flotilla-server admin … in its directory), or use Admin → Users in the dashboard.",
    );
  });

  it("has its own help", async () => {
    const help = await run({}, "admin", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toContain("grant-role <email|username> <support_agent|balena_admin>");
  });
});
