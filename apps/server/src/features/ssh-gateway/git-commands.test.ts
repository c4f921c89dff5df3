import { describe, expect, it } from "vitest";
import { GIT_FETCH_REFUSED, parseGitCommand, parseRefUpdates, pushVerdict } from "./git-commands.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const ZERO = "0".repeat(40);

describe("parseGitCommand", () => {
  it("reads the fleet slug of a push, with or without a leading slash, quotes or .git", () => {
    const expected = { kind: "receive-pack", owner: "acme", name: "Sensors_2", slug: "acme/sensors_2" };
    expect(parseGitCommand("git-receive-pack 'acme/Sensors_2.git'")).toEqual(expected);
    expect(parseGitCommand("git-receive-pack '/acme/Sensors_2.git'")).toEqual(expected);
    expect(parseGitCommand('git-receive-pack "/acme/Sensors_2.git"')).toEqual(expected);
    expect(parseGitCommand("git receive-pack acme/Sensors_2")).toEqual(expected);
    expect(parseGitCommand("git-receive-pack 'ACME/Sensors_2.git'")).toMatchObject({ owner: "acme" });
  });

  it("refuses anything that is not exactly a slug, without echoing control characters", () => {
    for (const path of [
      "'../../etc/passwd'",
      "'acme/fleet/../x.git'",
      "'acme/fleet.git'; rm -rf /",
      "'acme/-fleet.git'",
      "'acme/fle et.git'",
      "'acme/$(id).git'",
      "'/acme.git'",
      "'acme/fleet.git.git'",
      "",
      `'acme/${"f".repeat(101)}.git'`,
    ]) {
      const parsed = parseGitCommand(`git-receive-pack ${path}`);
      expect(parsed?.kind, path).toBe("refused");
    }
    const shown = parseGitCommand("git-receive-pack 'a\u001b[31m/x\n.git'");
    expect(shown).toMatchObject({ kind: "refused" });
    expect(JSON.stringify(shown)).not.toContain("\u001b");
  });

  it("refuses fetches and clones, and leaves other commands to the device gateway", () => {
    expect(parseGitCommand("git-upload-pack 'acme/fleet.git'")).toEqual({
      kind: "refused",
      message: GIT_FETCH_REFUSED,
    });
    expect(parseGitCommand("git-upload-archive 'acme/fleet.git'")).toEqual({
      kind: "refused",
      message: GIT_FETCH_REFUSED,
    });
    expect(parseGitCommand("host 0123456789abcdef")).toBeUndefined();
    expect(parseGitCommand(undefined)).toBeUndefined();
  });
});

describe("pushVerdict", () => {
  const updates = (text: string) => parseRefUpdates(text) ?? [];

  it("builds one update of main or master", () => {
    expect(pushVerdict(updates(`${ZERO} ${A} refs/heads/main\n`))).toEqual({
      build: { old: ZERO, new: A, ref: "refs/heads/main" },
    });
    expect(pushVerdict(updates(`${A} ${B} refs/heads/master\n`))).toMatchObject({ build: { new: B } });
  });

  it("refuses other refs, several branches and deletions as a whole", () => {
    expect(pushVerdict(updates(`${ZERO} ${A} refs/heads/main\n${ZERO} ${A} refs/tags/v1\n`))).toEqual({
      refused:
        "Only main or master can be pushed here (a push to either builds a release); refused: refs/tags/v1. Nothing was changed.",
    });
    expect(pushVerdict(updates(`${ZERO} ${A} refs/heads/main\n${ZERO} ${A} refs/heads/master\n`))).toEqual({
      refused: "Push one branch at a time, main or master. Nothing was changed.",
    });
    expect(pushVerdict(updates(`${A} ${ZERO} refs/heads/main\n`))).toEqual({
      refused: "Deleting main is not allowed. Nothing was changed.",
    });
  });

  it("reads only well-formed hook input", () => {
    expect(parseRefUpdates("")).toBeUndefined();
    expect(parseRefUpdates(`${A} ${B} main\n`)).toBeUndefined();
    expect(parseRefUpdates(`${A} ${B} refs/heads/main extra\n`)).toBeUndefined();
  });
});
