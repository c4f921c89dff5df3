import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createDownloadSlots, removeStaleCopies } from "./configured-image.ts";

describe("configured image downloads", () => {
  it("run at most so many at once, each slot freed once however often it is released", () => {
    const slots = createDownloadSlots(2);
    const first = slots.take();
    const second = slots.take();
    expect(first && second).toBeTruthy();
    expect(slots.take()).toBeUndefined();
    first?.();
    first?.();
    expect(slots.inUse).toBe(1);
    expect(slots.take()).toBeTruthy();
    expect(slots.take()).toBeUndefined();
  });

  it("remove partition copies a crashed process left a day ago, and nothing else", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-copies-"));
    try {
      const old = path.join(dir, "os-image-old.boot");
      const fresh = path.join(dir, "os-image-fresh.boot");
      const other = path.join(dir, "build.tar");
      for (const file of [old, fresh, other]) fs.writeFileSync(file, "x");
      const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
      fs.utimesSync(old, twoDaysAgo, twoDaysAgo);
      fs.utimesSync(other, twoDaysAgo, twoDaysAgo);
      await removeStaleCopies(dir);
      expect(fs.readdirSync(dir).sort()).toEqual(["build.tar", "os-image-fresh.boot"]);
      await removeStaleCopies(path.join(dir, "missing"));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
