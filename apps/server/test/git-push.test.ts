import { execFile, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { RELEASE_TEXTS } from "@flotilla/domain";
import { getSdk } from "balena-sdk";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGISTRY_TOKEN_ISSUER } from "../src/features/registry/tokens.ts";
import { GIT_PUSH_LIMITS, noPushRights } from "../src/features/ssh-gateway/git-push.ts";
import { fleetRepository } from "../src/features/ssh-gateway/git-repositories.ts";
import { type SshGateway, startSshGateway } from "../src/features/ssh-gateway/server.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { eventually } from "./support/agent.ts";
import { startPodman, type TestPodman } from "./support/podman.ts";
import { freePort, startRegistry, type TestRegistry } from "./support/registry.ts";
import { sshClientArgs } from "./support/ssh-client.ts";

/**
 * `git push` through the SSH gateway (docs/releases.md "Git push"), driven by Debian's git and
 * OpenSSH clients (`GIT_SSH_COMMAND`) against the real gateway, with a real build: podman's
 * Docker Engine API builds the pushed Dockerfile (FROM scratch with a static busybox) and pushes
 * it to a CNCF registry that trusts this API's tokens.
 */
const run = promisify(execFile);
let t: TestApp;
let gateway: SshGateway;
let registry: TestRegistry;
let engine: TestPodman;
let dir: string;
let fleetId: number;
let ownerToken: string;
const people: Record<string, { id: number; key: string }> = {};

// A word of this run: podman keeps the layers of earlier runs, and this step must run.
const RUN_WORD = crypto.randomBytes(6).toString("hex");
const OK_DOCKERFILE = `FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN echo "pushed with git ${RUN_WORD}" && sleep 2 && echo "slept"
CMD ["/bin/sleep", "3600"]
`;
const FAILING_DOCKERFILE = `FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "sh", "-c", "echo about to fail && exit 3"]
`;

type Pushed = { code: number | null; output: string; ended: number; seen: (text: string) => number | undefined };

/** `git …` in a working copy, as `who` with their key, through the gateway. */
function gitAs(who: string, cwd: string, args: string[]): Promise<Pushed> {
  const key = people[who]?.key ?? "";
  // The port comes from the remote's URL (ssh://) or is given here for the scp-like form.
  const ssh = ["ssh", ...sshClientArgs(gateway.port, key)].join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      cwd,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_SSH_COMMAND: ssh,
        GIT_TERMINAL_PROMPT: "0",
        LC_ALL: "C",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    // When each piece of the output arrived: the build log streams while git waits.
    const arrivals: { at: number; length: number }[] = [];
    const heard = (data: Buffer) => {
      output += data.toString();
      arrivals.push({ at: Date.now(), length: output.length });
    };
    child.stdout.on("data", heard);
    child.stderr.on("data", heard);
    child.on("error", reject);
    child.on("close", (code) => {
      const seen = (text: string) => {
        const index = output.indexOf(text);
        return index < 0 ? undefined : arrivals.find((arrival) => arrival.length > index)?.at;
      };
      resolve({ code, output, ended: Date.now(), seen });
    });
  });
}

const localGit = async (cwd: string, ...args: string[]) =>
  (
    await run("git", ["-c", "user.name=Ann", "-c", "user.email=ann@example.com", ...args], {
      cwd,
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    })
  ).stdout.trim();

/** A working copy with a Dockerfile project (and busybox for it), committed on main. */
async function workingCopy(name: string, dockerfile: string) {
  const copy = path.join(dir, name);
  fs.mkdirSync(copy);
  await localGit(copy, "init", "-q", "-b", "main");
  fs.copyFileSync("/bin/busybox", path.join(copy, "busybox"));
  fs.writeFileSync(path.join(copy, "Dockerfile"), dockerfile);
  fs.writeFileSync(path.join(copy, "balena.yml"), "version: 1.4.0\n");
  await localGit(copy, "add", ".");
  await localGit(copy, "commit", "-q", "-m", "first");
  return { dir: copy, head: () => localGit(copy, "rev-parse", "HEAD") };
}

const releases = async () =>
  (
    await t.db.query<{ id: number; commit: string; status: string; created_by: number | null; source: string }>(
      `SELECT id, commit, status, is_created_by__user AS created_by, source FROM "release"
        WHERE belongs_to__application = $1 ORDER BY id`,
      [fleetId],
    )
  ).rows;

const serverRef = async (branch: string) =>
  (
    await run("git", ["--git-dir", fleetRepository(t.config.dataDir, fleetId), "rev-parse", "--verify", "-q", branch], {
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
    }).catch(() => ({ stdout: "" }))
  ).stdout.trim();

async function personWithKey(name: string) {
  const person = await t.factories.user({ username: name });
  const file = path.join(dir, `id_${name}`);
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", file]);
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(person.token);
  await sdk.models.key.create(`${name}'s laptop`, fs.readFileSync(`${file}.pub`, "utf8").trim());
  people[name] = { id: person.user.id, key: file };
  return person;
}

beforeAll(async () => {
  const registryPort = await freePort();
  const registryHost = `127.0.0.1:${registryPort}`;
  engine = await startPodman([registryHost]);
  t = await createTestApp({
    FLOTILLA_REGISTRY_URL: `http://${registryHost}`,
    FLOTILLA_BUILDER: `unix://${engine.socket}`,
  });
  const certificatePem = await (await fetch(`${t.url}/auth/v1/registry-cert`)).text();
  registry = await startRegistry({
    port: registryPort,
    token: { realm: `${t.url}/auth/v1/token`, issuer: REGISTRY_TOKEN_ISSUER, certificatePem },
  });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-git-push-"));
  gateway = await startSshGateway(t.ctx, pino({ level: "silent" }), { port: 0, host: "127.0.0.1" });
  const owner = await personWithKey("pusher");
  ownerToken = owner.token;
  const org = await t.factories.organization({ name: "Pushers", admins: [owner.user] });
  const fleet = await t.factories.fleet(org, { name: "Gitfleet" });
  fleetId = fleet.id;
  const observer = await personWithKey("watcher");
  await t.factories.fleetMember(observer.user, fleet, "observer");
  await personWithKey("stranger");
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await registry?.stop();
  await engine?.stop();
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("git push through the SSH gateway", () => {
  let good: Awaited<ReturnType<typeof workingCopy>>;
  let built: string;

  it("builds a push of main into a release of the pushed commit, streaming the build to git", async () => {
    good = await workingCopy("good", OK_DOCKERFILE);
    built = await good.head();
    // An ssh:// remote (the gateway's port in it), as the dashboard shows it: `git-receive-pack '/pushers/gitfleet.git'`.
    await localGit(
      good.dir,
      "remote",
      "add",
      "flotilla",
      `ssh://pusher@127.0.0.1:${gateway.port}/pushers/Gitfleet.git`,
    );
    const pushed = await gitAs("pusher", good.dir, ["push", "flotilla", "main"]);
    expect(pushed.output).toContain(`remote: Building ${built} (main) for pushers/gitfleet`);
    // The engine's own lines, as the build wrote them, and the end.
    expect(pushed.output).toMatch(/remote: \[main\] STEP 1\/5: FROM scratch/);
    expect(pushed.output).toContain("remote: [main] pushed with git");
    // Printed as the build went: the line before the two-second step reached git well before its end.
    expect(pushed.ended - (pushed.seen("remote: [main] pushed with git") ?? pushed.ended)).toBeGreaterThan(1500);
    expect(pushed.output).toMatch(/remote: \[main\] Image sha256:[0-9a-f]{64} pushed/);
    expect(pushed.output).toContain("remote: Release created");
    expect(pushed.output).toMatch(new RegExp(`remote: Release 1\\.4\\.0 of pushers/gitfleet built from ${built}: `));
    expect(pushed.output).toContain("* [new branch]      main -> main");
    expect(pushed.code).toBe(0);
    if (process.env.SHOW_GIT_OUTPUT) console.log(pushed.output);

    const rows = await releases();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ commit: built, status: "success", created_by: people.pusher?.id, source: "cloud" });
    expect(await serverRef("main")).toBe(built);
    // The fleet tracks the latest release: it moved to the pushed one.
    const { rows: fleet } = await t.db.query<{ target: number }>(
      `SELECT should_be_running__release AS target FROM "application" WHERE id = $1`,
      [fleetId],
    );
    expect(fleet[0]?.target).toBe(rows[0]?.id);
  }, 180_000);

  it("takes the scp-like remote, and a commit already built is not built again", async () => {
    // `pusher@host:pushers/gitfleet.git` sends `git-receive-pack 'pushers/gitfleet.git'`; the
    // port is GIT_SSH_COMMAND's `-p`.
    const pushed = await gitAs("pusher", good.dir, ["push", "pusher@127.0.0.1:pushers/gitfleet.git", "main:master"]);
    expect(pushed.output).toContain(`remote: ${built} is already release 1.4.0 of pushers/gitfleet: nothing to build.`);
    expect(pushed.code).toBe(0);
    expect(await serverRef("master")).toBe(built);
    expect(await releases()).toHaveLength(1);
  });

  it("refuses a failing build with its error, exits non-zero and leaves the branch where it was", async () => {
    fs.writeFileSync(path.join(good.dir, "Dockerfile"), FAILING_DOCKERFILE);
    await localGit(good.dir, "commit", "-q", "-am", "breaks the build");
    const broken = await good.head();
    const pushed = await gitAs("pusher", good.dir, ["push", "flotilla", "main"]);
    expect(pushed.code).not.toBe(0);
    expect(pushed.output).toContain("remote: [main] about to fail");
    expect(pushed.output).toMatch(/remote: \[main\] error: .*exit status 3/);
    expect(pushed.output).toContain(`remote: ${RELEASE_TEXTS.build_failed}`);
    expect(pushed.output).toContain("remote: error: the build ended failed; main was not updated");
    expect(pushed.output).toContain("! [remote rejected] main -> main (pre-receive hook declined)");
    const rows = await releases();
    expect(rows.at(-1)).toMatchObject({ commit: broken, status: "failed" });
    expect(await serverRef("main")).toBe(built);
  }, 180_000);

  it("refuses a non-fast-forward push, forced or not, and changes nothing", async () => {
    // Another history: a commit that does not descend from what main holds on the server.
    await localGit(good.dir, "checkout", "-q", "--orphan", "rewrite");
    await localGit(good.dir, "commit", "-q", "-m", "rewritten history");
    const rewritten = await good.head();
    const before = await releases();

    // Not forced: git refuses by itself, from the branch the server advertises.
    const plain = await gitAs("pusher", good.dir, ["push", "flotilla", "rewrite:main"]);
    expect(plain.code).not.toBe(0);
    expect(plain.output).toMatch(/! \[rejected\]\s+rewrite -> main \((non-fast-forward|fetch first)\)/);

    // Forced: the server refuses, in git's words, before anything is built.
    const forced = await gitAs("pusher", good.dir, ["push", "--force", "flotilla", "rewrite:main"]);
    expect(forced.code).not.toBe(0);
    expect(forced.output).toContain("remote: error: denying non-fast-forward refs/heads/main (you should pull first)");
    expect(forced.output).toContain("! [remote rejected] rewrite -> main (pre-receive hook declined)");
    expect(forced.output).not.toContain(`Building ${rewritten}`);
    expect(await releases()).toEqual(before);
    expect(await serverRef("main")).toBe(built);
  });

  it("refuses other branches, tags and deletions as a whole", async () => {
    const branch = await gitAs("pusher", good.dir, ["push", "flotilla", "rewrite:feature"]);
    expect(branch.code).not.toBe(0);
    expect(branch.output).toContain(
      "remote: error: Only main or master can be pushed here (a push to either builds a release); refused: refs/heads/feature. Nothing was changed.",
    );
    expect(await serverRef("feature")).toBe("");

    const deletion = await gitAs("pusher", good.dir, ["push", "flotilla", ":master"]);
    expect(deletion.code).not.toBe(0);
    expect(deletion.output).toContain("remote: error: Deleting master is not allowed. Nothing was changed.");
    expect(await serverRef("master")).toBe(built);
  });

  it("answers a fleet the user may not push to and a fleet that does not exist with the same words", async () => {
    const to = (slug: string) => `ssh://%USER%@127.0.0.1:${gateway.port}/${slug}.git`;
    const attempt = async (who: string, slug: string) => {
      const pushed = await gitAs(who, good.dir, ["push", to(slug).replace("%USER%", who), "rewrite:main"]);
      expect(pushed.code).toBe(128);
      expect(pushed.output).toContain("fatal: Could not read from remote repository.");
      return pushed.output.split("\n")[0];
    };
    const observer = await attempt("watcher", "pushers/gitfleet");
    const outsider = await attempt("stranger", "pushers/gitfleet");
    const unknown = await attempt("stranger", "pushers/nosuchfleet");
    expect(observer).toBe(noPushRights("pushers/gitfleet"));
    expect(outsider).toBe(observer);
    expect(unknown).toBe(noPushRights("pushers/nosuchfleet"));
    expect(unknown?.replace("nosuchfleet", "gitfleet")).toBe(observer);
    // A path that is no fleet's slug never reaches git.
    const odd = await attempt("pusher", "../../etc/passwd");
    expect(odd).toMatch(/^Not a fleet's repository: /);
    expect((await releases()).map((row) => row.commit)).not.toContain(await good.head());
  });

  it("refuses a key nobody stored, and fetching or cloning", async () => {
    const spare = path.join(dir, "id_spare");
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", spare]);
    people.spare = { id: 0, key: spare };
    const unknownKey = await gitAs("spare", good.dir, [
      "push",
      `ssh://pusher@127.0.0.1:${gateway.port}/pushers/gitfleet.git`,
      "rewrite:main",
    ]);
    expect(unknownKey.code).not.toBe(0);
    expect(unknownKey.output).toContain("Permission denied (publickey)");

    const clone = await gitAs("pusher", dir, ["clone", `ssh://pusher@127.0.0.1:${gateway.port}/pushers/gitfleet.git`]);
    expect(clone.code).not.toBe(0);
    expect(clone.output).toContain("This server takes git pushes only: fetching and cloning are not offered.");
  });

  it("stops a push beyond its bounds: the pack's size, and the push's time (the build is cancelled)", async () => {
    const limits = { ...GIT_PUSH_LIMITS };
    try {
      await localGit(good.dir, "checkout", "-q", "main");
      await localGit(good.dir, "reset", "-q", "--hard", built);
      fs.writeFileSync(path.join(good.dir, "blob.bin"), crypto.randomBytes(64 * 1024));
      await localGit(good.dir, "add", "blob.bin");
      await localGit(good.dir, "commit", "-q", "-m", "a big file");
      GIT_PUSH_LIMITS.packBytes = 16 * 1024;
      const large = await gitAs("pusher", good.dir, ["push", "flotilla", "main"]);
      expect(large.code).not.toBe(0);
      expect(large.output).toContain("pack exceeds maximum allowed size");
      expect(await serverRef("main")).toBe(built);
      GIT_PUSH_LIMITS.packBytes = limits.packBytes;

      fs.writeFileSync(path.join(good.dir, "Dockerfile"), `${OK_DOCKERFILE}RUN sleep 30\n`);
      await localGit(good.dir, "commit", "-q", "-am", "a slow build");
      const slow = await good.head();
      GIT_PUSH_LIMITS.pushMs = 4000;
      const stopped = await gitAs("pusher", good.dir, ["push", "flotilla", "main"]);
      expect(stopped.code).not.toBe(0);
      expect(stopped.output).toContain("The push took more than 4 seconds; it was stopped.");
      expect(await serverRef("main")).toBe(built);
      // The build ends as cancelled (it notices between steps, as an HTTP push's does).
      await eventually(
        async () => (await releases()).find((row) => row.commit === slow)?.status === "cancelled",
        60_000,
      );
    } finally {
      Object.assign(GIT_PUSH_LIMITS, limits);
    }
  }, 120_000);

  it("removes the fleet's repository with the fleet", async () => {
    const repository = fleetRepository(t.config.dataDir, fleetId);
    expect(fs.existsSync(path.join(repository, "HEAD"))).toBe(true);
    const response = await fetch(`${t.url}/v7/application(${fleetId})`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${ownerToken}` },
    });
    expect(response.status).toBe(200);
    await eventually(async () => !fs.existsSync(repository));
  });
});
