import { RELEASE_TEXTS } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import en from "../../locales/en.json";
import { cliCommands, gitCommands } from "./add-release-dialog.tsx";
import { batchTargets } from "./batch-dialogs.tsx";
import { compositionYaml } from "./composition.ts";
import { tagChanges } from "./data.ts";
import {
  assetTree,
  buildDurationMs,
  buildLogTail,
  formatDuration,
  isDraft,
  RELEASE_SEARCH_MAX_LENGTH,
  ReleaseFilterError,
  releaseAbilities,
  releaseErrorKey,
  releaseLabel,
  releaseListFilter,
  releaseSearchProblem,
  shownStatus,
  totalImageSize,
  versionText,
} from "./model.ts";
import { pickerEntries } from "./release-picker.tsx";

const roles = (...names: string[]) => names.map((role) => ({ role }));

describe("release search filter (spec 2 §5: raw_version or a tag key or value, contains)", () => {
  it("is the fleet alone without a search", () => {
    expect(releaseListFilter(4, "  ")).toEqual({ belongs_to__application: 4 });
  });

  it("matches raw_version, commit and tag keys and values, case-insensitively", () => {
    const filter = releaseListFilter(4, " V1.2 ") as { $or: unknown[] };
    expect(filter.$or).toContainEqual({ $contains: [{ $tolower: { $: "raw_version" } }, "v1.2"] });
    expect(filter.$or).toContainEqual({
      release_tag: {
        $any: {
          $alias: "rt",
          $expr: {
            $or: [
              { $contains: [{ $tolower: { $: ["rt", "tag_key"] } }, "v1.2"] },
              { $contains: [{ $tolower: { $: ["rt", "value"] } }, "v1.2"] },
            ],
          },
        },
      },
    });
  });

  it("throws for what cannot be a filter (errors.release_panel_create_filter)", () => {
    expect(() => releaseListFilter(4, "x".repeat(RELEASE_SEARCH_MAX_LENGTH + 1))).toThrow(ReleaseFilterError);
    expect(() => releaseListFilter(4, "a\u0000b")).toThrow(ReleaseFilterError);
    expect(() => releaseListFilter(Number.NaN, "a")).toThrow(ReleaseFilterError);
    expect(en.errors.release_panel_create_filter).toBe(RELEASE_TEXTS.release_panel_create_filter);
  });

  it("says why a search cannot be a filter: over 200 characters, or control characters", () => {
    expect(releaseSearchProblem("x".repeat(RELEASE_SEARCH_MAX_LENGTH))).toBeUndefined();
    expect(releaseSearchProblem("x".repeat(RELEASE_SEARCH_MAX_LENGTH + 1))).toBe("too_long");
    expect(releaseSearchProblem("a\u0000b")).toBe("control_characters");
    expect(en.releases.search_problem.too_long).toContain("at most {{max}}");
  });
});

describe("shown status (spec 2 §4)", () => {
  const now = Date.parse("2026-01-01T00:10:00Z");
  it("maps statuses and times out a running build after 120 s without update", () => {
    expect(shownStatus({ status: "interrupted" }, now)).toBe("cancelled");
    expect(shownStatus({ status: "error" }, now)).toBe("failed");
    expect(shownStatus({ status: "local" }, now)).toBe("local");
    expect(shownStatus({ status: "success" }, now)).toBe("succeeded");
    expect(shownStatus({ status: "running", update_timestamp: "2026-01-01T00:08:30Z" }, now)).toBe("running");
    expect(shownStatus({ status: "running", update_timestamp: "2026-01-01T00:07:59Z" }, now)).toBe("failed");
  });
});

describe("build duration and image size", () => {
  it("is end − start, start → now while running, unknown otherwise", () => {
    const start = "2026-01-01T00:00:00Z";
    expect(buildDurationMs({ start_timestamp: start, end_timestamp: "2026-01-01T00:01:05Z", status: "success" })).toBe(
      65_000,
    );
    expect(
      buildDurationMs(
        { start_timestamp: start, end_timestamp: null, status: "running" },
        Date.parse("2026-01-01T00:00:07Z"),
      ),
    ).toBe(7000);
    expect(buildDurationMs({ start_timestamp: start, end_timestamp: null, status: "failed" })).toBeUndefined();
    // A build its crashed builder left running times out 120 s after its last update: the
    // duration stops there, an hour later it is the same.
    const stale = {
      start_timestamp: start,
      end_timestamp: null,
      status: "running",
      update_timestamp: "2026-01-01T00:00:30Z",
    };
    expect(buildDurationMs(stale, Date.parse("2026-01-01T00:05:00Z"))).toBe(150_000);
    expect(buildDurationMs(stale, Date.parse("2026-01-01T01:00:00Z"))).toBe(150_000);
    expect(buildDurationMs({ start_timestamp: null, end_timestamp: null, status: "success" })).toBeUndefined();
    expect(formatDuration(65_000)).toBe("1m 5s");
    expect(formatDuration(3_723_000)).toBe("1h 2m 3s");
    expect(formatDuration(400)).toBe("0s");
  });

  it("sums the images' sizes, Big Integers as strings included", () => {
    expect(totalImageSize([{ image_size: 1024 }, { image_size: "2048" }, { image_size: null }])).toBe(3072);
    expect(totalImageSize([{ image_size: null }])).toBeUndefined();
  });
});

describe("build log tail (spec 2 §9: 2,999 lines with a truncation notice)", () => {
  it("keeps the last lines and says when it cut", () => {
    const log = Array.from({ length: 3005 }, (_v, i) => `line ${i + 1}`).join("\n");
    const tail = buildLogTail(`${log}\n`);
    expect(tail.lines).toHaveLength(2999);
    expect(tail.lines[0]).toBe("line 7");
    expect(tail.lines.at(-1)).toBe("line 3005");
    expect(tail).toMatchObject({ truncated: true, total: 3005 });
    expect(buildLogTail("a\r\nb")).toEqual({ lines: ["a", "b"], truncated: false, total: 2 });
    expect(buildLogTail(null)).toEqual({ lines: [], truncated: false, total: 0 });
  });
});

describe("assets tree", () => {
  it("splits asset_key paths on / with folders first", () => {
    const asset = (id: number, asset_key: string) => ({ id, asset_key, asset: { filename: asset_key, size: 1 } });
    const tree = assetTree([asset(1, "docs/readme.md"), asset(2, "sbom.json"), asset(3, "docs/api/v1.json")]);
    expect(tree.map((node) => node.name)).toEqual(["docs", "sbom.json"]);
    const docs = tree[0];
    expect(docs?.asset).toBeUndefined();
    expect(docs?.children.map((node) => node.path)).toEqual(["docs/api", "docs/readme.md"]);
    expect(docs?.children[0]?.children[0]?.asset?.id).toBe(3);
  });
});

describe("composition as docker-compose YAML", () => {
  it("renders JSON compositions and refuses what is not one", () => {
    const yaml = compositionYaml({ services: { main: { image: "nginx:1.27", ports: ["80:80"] } } });
    expect(yaml).toContain("services:\n  main:\n    image: nginx:1.27");
    expect(compositionYaml('{"services":{"a":{"image":"x"}}}')).toContain("a:");
    expect(compositionYaml(null)).toBeUndefined();
    expect(compositionYaml({})).toBeUndefined();
    expect(() => compositionYaml("{not json")).toThrow();
    expect(() => compositionYaml([1, 2])).toThrow();
  });
});

describe("release error codes", () => {
  it("reads the X-Flotilla-Error-Code header of the SDK's request errors", () => {
    const error = {
      statusCode: 409,
      body: "…",
      responseHeaders: new Headers({ "X-Flotilla-Error-Code": "cannot_delete_pinned_releases" }),
    };
    expect(releaseErrorKey(error)).toBe("warnings.cannot_delete_pinned_releases");
    expect(releaseErrorKey({ statusCode: 409, body: { code: "already_finalized" } })).toBe(
      "warnings.already_finalized",
    );
    expect(releaseErrorKey({ statusCode: 400, body: "x" })).toBeUndefined();
  });

  it("keeps the domain's texts for the warnings", () => {
    for (const key of [
      "will_not_be_able_to_unfinalize",
      "already_finalized",
      "cannot_validate_failed_releases",
      "cannot_delete_pinned_releases",
      "invalidating_will_update_unpinned_devices",
    ] as const) {
      expect(en.warnings[key]).toBe(RELEASE_TEXTS[key]);
    }
    expect(en.errors.could_not_parse_composition_data).toBe(RELEASE_TEXTS.could_not_parse_composition_data);
    expect(en.errors.no_dockerfile_available).toBe(RELEASE_TEXTS.no_dockerfile_available);
  });
});

describe("release abilities (spec 2 §2 read-only users)", () => {
  it("makes observers and members read-only, editors not", () => {
    expect(releaseAbilities(roles("observer"))).toMatchObject({ readOnly: true, update: false, delete: false });
    expect(releaseAbilities([])).toMatchObject({ readOnly: true, update: false });
    expect(releaseAbilities(roles("operator"))).toMatchObject({ readOnly: false, update: false });
    expect(releaseAbilities(roles("safe-developer"))).toMatchObject({ update: true, delete: false, removeTags: false });
    expect(releaseAbilities(roles("developer"))).toMatchObject({ update: true, delete: true, removeTags: true });
  });
});

describe("tag changes", () => {
  it("removes dropped keys and sets new or changed values only", () => {
    const before = [
      { tag_key: "env", value: "prod" },
      { tag_key: "old", value: "1" },
      { tag_key: "same", value: "x" },
    ];
    expect(
      tagChanges(before, [
        { key: "env", value: "staging" },
        { key: " same ", value: "x" },
        { key: "new", value: "" },
      ]),
    ).toEqual([
      { kind: "remove", key: "old" },
      { kind: "set", key: "env", value: "staging" },
      { kind: "set", key: "new", value: "" },
    ]);
  });
});

describe("batch targets", () => {
  const release = (id: number, status: string, is_final: boolean, is_invalidated: boolean) => ({
    id,
    commit: `c${id}`,
    raw_version: "1.0.0",
    status,
    is_final,
    is_invalidated,
  });
  it("finalizes drafts only and never validates failed or cancelled releases", () => {
    const rows = [
      release(1, "success", true, false),
      release(2, "success", false, true),
      release(3, "failed", true, true),
    ];
    expect(batchTargets("finalize", rows).targets.map((r) => r.id)).toEqual([2]);
    expect(batchTargets("invalidate", rows).targets.map((r) => r.id)).toEqual([1]);
    expect(batchTargets("validate", rows).targets.map((r) => r.id)).toEqual([2]);
    expect(batchTargets("delete", rows).targets).toHaveLength(3);
  });
});

describe("release pickers", () => {
  it("flag a current release that is no longer selectable", () => {
    const picker = [
      {
        id: 1,
        commit: "a".repeat(32),
        end_timestamp: null,
        raw_version: "1.0.0",
        known_issue_list: null,
        release_tag: [],
      },
    ];
    expect(pickerEntries(picker, { id: 1, commit: "a", raw_version: "1.0.0" }).stale).toBeUndefined();
    expect(pickerEntries(picker, { id: 2, commit: "b", raw_version: "0.9.0", is_invalidated: true }).stale?.id).toBe(2);
    expect(pickerEntries(picker, undefined).stale).toBeUndefined();
  });
});

describe("add-release commands", () => {
  it("log in against this API and push to owner/fleet", () => {
    const commands = cliCommands("http://api.example", { app_name: "demo-fleet", organization: [{ handle: "demo" }] });
    expect(commands.login).toBe("npx flotilla login --api http://api.example");
    expect(commands.push).toBe("npx flotilla push demo/demo-fleet");
  });

  it("add the fleet's git remote on the SSH gateway, with the port in an ssh:// URL unless it is 22", () => {
    const onPort = gitCommands({ host: "fleet.example.com", port: 2222 }, "ann", "demo/demo-fleet");
    expect(onPort.remoteAdd).toBe("git remote add flotilla ssh://ann@fleet.example.com:2222/demo/demo-fleet.git");
    expect(onPort.push).toBe("git push flotilla main");
    expect(gitCommands({ host: "fleet.example.com", port: 22 }, "ann", "demo/demo-fleet").remoteAdd).toBe(
      "git remote add flotilla ann@fleet.example.com:demo/demo-fleet.git",
    );
    expect(gitCommands({ host: "fleet.example.com", port: 22 }, "ann smith", "demo/x").remoteAdd).toBe(
      "git remote add flotilla ssh://ann%20smith@fleet.example.com/demo/x.git",
    );
  });
});

describe("a release's version for people", () => {
  it("shows a draft by its semver: balena's raw version of a draft ends in its creation time in ms", () => {
    expect(versionText({ raw_version: "1.2.3-1732847362123", is_final: false })).toBe("1.2.3");
    expect(versionText({ raw_version: "1.2.3-beta.1732847362123+b3", is_final: false })).toBe("1.2.3-beta+b3");
    expect(releaseLabel({ raw_version: "0.0.0-1732847362123", is_final: false, commit: "abcdef123" })).toBe(
      "0.0.0 (abcdef1)",
    );
    // Without is_final read (the SDK's own selects), the mark tells.
    expect(versionText({ raw_version: "1.2.3-1732847362123" })).toBe("1.2.3");
    expect(isDraft({ raw_version: "1.2.3-1732847362123" })).toBe(true);
  });
  it("shows a final release's raw version as it is", () => {
    expect(versionText({ raw_version: "1.2.3+rev1", is_final: true })).toBe("1.2.3+rev1");
    expect(versionText({ raw_version: "1.2.3-rc.1", is_final: true })).toBe("1.2.3-rc.1");
    expect(isDraft({ raw_version: "1.2.3-rc.1" })).toBe(false);
    expect(isDraft({ raw_version: "1.2.3", is_final: false })).toBe(true);
  });
});
