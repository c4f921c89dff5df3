import { describe, expect, it } from "vitest";
import { applyChanges, type StagedChange, type StoredVariable, shownRows, stage, takenNames, undo } from "./staged.ts";

const stored: StoredVariable[] = [
  { key: "env:1", id: 1, name: "GREETING", value: "hello", serviceId: 0 },
  { key: "env:2", id: 2, name: "LEVEL", value: "3", serviceId: 0 },
];

describe("staged variable edits", () => {
  it("marks rows added, updated (new value shown) and deleted", () => {
    let changes: StagedChange[] = [];
    changes = stage(changes, { kind: "update", key: "env:1", value: "bonjour" });
    changes = stage(changes, { kind: "delete", key: "env:2" });
    changes = stage(changes, { kind: "add", key: "new:1", name: "MODE", value: "fast", serviceId: 0 });
    expect(shownRows(stored, changes).map((row) => [row.name, row.state, row.value, row.before])).toEqual([
      ["GREETING", "updated", "bonjour", "hello"],
      ["LEVEL", "deleted", "3", undefined],
      ["MODE", "added", "fast", undefined],
    ]);
    expect(takenNames(shownRows(stored, changes), 0)).toEqual(["GREETING", "MODE"]);
  });

  it("undoes one change; editing an addition keeps it an addition; deleting one drops it", () => {
    let changes = stage([], { kind: "add", key: "new:1", name: "MODE", value: "fast", serviceId: 0 });
    changes = stage(changes, { kind: "update", key: "new:1", value: "slow" });
    expect(changes).toEqual([{ kind: "add", key: "new:1", name: "MODE", value: "slow", serviceId: 0 }]);
    changes = stage(changes, { kind: "update", key: "env:1", value: "hi" });
    expect(undo(changes, "env:1")).toHaveLength(1);
    expect(stage(changes, { kind: "delete", key: "new:1" })).toEqual([{ kind: "update", key: "env:1", value: "hi" }]);
  });

  it("applies every change at most `concurrency` at a time and keeps the failed ones", async () => {
    const calls: string[] = [];
    let running = 0;
    let peak = 0;
    const slow = async (label: string, fail = false) => {
      running++;
      peak = Math.max(peak, running);
      calls.push(label);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      if (fail) throw new Error(`${label} failed`);
    };
    const changes: StagedChange[] = [
      { kind: "update", key: "env:1", value: "x" },
      { kind: "delete", key: "env:2" },
      { kind: "add", key: "new:1", name: "A", value: "1", serviceId: 0 },
      { kind: "add", key: "new:2", name: "B", value: "2", serviceId: 0 },
    ];
    const result = await applyChanges(
      stored,
      changes,
      {
        create: (change) => slow(`create ${change.name}`, change.name === "B"),
        update: (row, value) => slow(`update ${row.name}=${value}`),
        remove: (row) => slow(`delete ${row.name}`),
      },
      2,
    );
    expect(peak).toBe(2);
    expect(calls.sort()).toEqual(["create A", "create B", "delete LEVEL", "update GREETING=x"]);
    expect(result.failed.map((failure) => failure.change.key)).toEqual(["new:2"]);
    expect(result.succeeded).toHaveLength(3);
  });
});
