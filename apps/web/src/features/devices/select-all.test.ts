import { describe, expect, it } from "vitest";
import { batchReport } from "./batch.ts";
import {
  createNewTags,
  ID_PAGE_SIZE,
  idPageFilter,
  idPageSize,
  isMatchingAction,
  NEW_TAGS_GROUP,
  newTagsBatch,
  type PagedProgress,
  progressPercent,
  runPagedBatch,
  splitTagWrites,
  type TagPine,
  wholePage,
} from "./select-all.ts";

/** A fake fleet of ids 1..n served in keyset pages, as the data API would. */
function fleet(n: number) {
  const ids = Array.from({ length: n }, (_, index) => index + 1);
  const asked: Array<number | undefined> = [];
  return {
    asked,
    fetchPage: async (after: number | undefined, size: number) => {
      asked.push(after);
      return ids.filter((id) => after === undefined || id > after).slice(0, size);
    },
  };
}

describe("select all matching devices: paging", () => {
  it("pages by id after the last one seen, not by offset", () => {
    expect(idPageFilter({ belongs_to__application: 1 }, undefined)).toEqual({ belongs_to__application: 1 });
    expect(idPageFilter({ belongs_to__application: 1 }, 500)).toEqual({
      $and: [{ belongs_to__application: 1 }, { id: { $gt: 500 } }],
    });
  });

  it("runs 120 devices in pages of 50 with progress after each page", async () => {
    const source = fleet(120);
    const progress: PagedProgress[] = [];
    const pages: number[][] = [];
    const result = await runPagedBatch({
      total: 120,
      pageSize: 50,
      fetchPage: source.fetchPage,
      applyPage: async (ids) => {
        pages.push(ids);
        return { succeeded: ids, failed: [] };
      },
      onProgress: (p) => progress.push(p),
    });
    expect(pages.map((page) => page.length)).toEqual([50, 50, 20]);
    expect(source.asked).toEqual([undefined, 50, 100]);
    expect(progress.map((p) => p.done)).toEqual([0, 50, 100, 120]);
    expect(progress.every((p) => p.total === 120)).toBe(true);
    expect(result.succeeded).toHaveLength(120);
    expect(result.cancelled).toBe(false);
  });

  it("asks once more when the last page is exactly full", async () => {
    const source = fleet(100);
    await runPagedBatch({
      total: 100,
      pageSize: 50,
      fetchPage: source.fetchPage,
      applyPage: async (ids) => ({ succeeded: ids, failed: [] }),
    });
    expect(source.asked).toEqual([undefined, 50, 100]);
  });

  it("stops between pages when cancelled", async () => {
    const source = fleet(120);
    const controller = new AbortController();
    const result = await runPagedBatch({
      total: 120,
      pageSize: 50,
      fetchPage: source.fetchPage,
      applyPage: async (ids) => {
        controller.abort();
        return { succeeded: ids, failed: [] };
      },
      signal: controller.signal,
    });
    expect(result.cancelled).toBe(true);
    expect(result.succeeded).toHaveLength(50);
  });

  it("gathers failures of every page into one spec report", async () => {
    const source = fleet(120);
    const result = await runPagedBatch({
      total: 120,
      pageSize: 50,
      fetchPage: source.fetchPage,
      applyPage: (ids) =>
        wholePage(ids, async () => {
          if (ids.includes(60)) throw new Error("Unauthorized");
        }),
    });
    expect(result.failed).toHaveLength(50);
    expect(batchReport(result, (error) => (error as Error).message)).toEqual({
      severity: "warning",
      failedCount: 50,
      message: "Operation failed with: Unauthorized (×50)",
    });
  });

  it("ends with what was done when an id page cannot be fetched", async () => {
    let calls = 0;
    const result = await runPagedBatch({
      total: 120,
      pageSize: 50,
      fetchPage: async () => {
        calls += 1;
        if (calls === 2) throw new Error("offline");
        return Array.from({ length: 50 }, (_, index) => index + 1);
      },
      applyPage: async (ids) => ({ succeeded: ids, failed: [] }),
    });
    expect(result.succeeded).toHaveLength(50);
    expect((result.error as Error).message).toBe("offline");
  });

  it("grows the total when more devices turn up than were counted", async () => {
    const progress: PagedProgress[] = [];
    await runPagedBatch({
      total: 100,
      pageSize: 50,
      fetchPage: fleet(110).fetchPage,
      applyPage: async (ids) => ({ succeeded: ids, failed: [] }),
      onProgress: (p) => progress.push(p),
    });
    expect(progress.at(-1)).toEqual({ done: 110, total: 110 });
  });

  it("pages by 500 unless a smaller size is stored", () => {
    expect(idPageSize(null)).toBe(ID_PAGE_SIZE);
    expect(idPageSize("50")).toBe(50);
    expect(idPageSize("0")).toBe(ID_PAGE_SIZE);
    expect(idPageSize("5000")).toBe(ID_PAGE_SIZE);
    expect(idPageSize("lots")).toBe(ID_PAGE_SIZE);
  });

  it("shows progress as a whole percent", () => {
    expect(progressPercent({ done: 0, total: 0 })).toBe(0);
    expect(progressPercent({ done: 1500, total: 10_000 })).toBe(15);
    expect(progressPercent({ done: 120, total: 100 })).toBe(100);
  });

  it("splits a page's tag writes into updates of existing tags and new ones", () => {
    expect(splitTagWrites([1, 2, 3, 4], [2, 4])).toEqual({ update: [2, 4], create: [1, 3] });
  });

  it("offers only the actions that are data API writes by id", () => {
    expect(["move", "tag", "pin", "delete", "reboot", "run-command"].filter(isMatchingAction)).toEqual([
      "move",
      "tag",
      "pin",
      "delete",
    ]);
  });
});

describe("select all matching devices: new tags in one $batch", () => {
  type Sent = { resource: string; body: Record<string, unknown> } | { method: string; url: string; body: unknown };
  /** A fake pine: records what is sent and answers the batch with `statuses` per device. */
  function server(statuses: (device: number) => number, batchFails = false) {
    const sent: Sent[] = [];
    const pine: TagPine = {
      async request(params) {
        sent.push(params);
        if (batchFails) throw new Error("404");
        const { requests } = params.body as ReturnType<typeof newTagsBatch>;
        return { responses: requests.map((request) => ({ id: request.id, status: statuses(request.body.device) })) };
      },
      async post(params) {
        sent.push(params);
        if (statuses(Number(params.body.device)) !== 201) throw new Error("refused");
        return {};
      },
    };
    return { sent, pine };
  }
  const posted = (sent: Sent[]) => sent.map((params) => ("resource" in params ? params.body.device : params.url));

  it("sends a page's new tags as one POST /v7/$batch, one atomicity group of POSTs to device_tag", async () => {
    expect(newTagsBatch([7, 9], "rack", "r1")).toEqual({
      requests: [
        {
          id: "7",
          method: "POST",
          url: "device_tag",
          body: { device: 7, tag_key: "rack", value: "r1" },
          atomicityGroup: NEW_TAGS_GROUP,
        },
        {
          id: "9",
          method: "POST",
          url: "device_tag",
          body: { device: 9, tag_key: "rack", value: "r1" },
          atomicityGroup: NEW_TAGS_GROUP,
        },
      ],
    });
    const { sent, pine } = server(() => 201);
    const ids = Array.from({ length: 500 }, (_, index) => index + 1);
    const result = await createNewTags(pine, ids, { key: "rack", value: "r1" }, 50);
    expect(sent).toEqual([{ method: "POST", url: "$batch", body: newTagsBatch(ids, "rack", "r1") }]);
    expect(result).toEqual({ succeeded: ids, failed: [] });
  });

  it("posts the tags one by one when the group is refused, so the report names the refused devices", async () => {
    // The server refuses an atomicity group as a whole: every answer carries the refusal.
    const { sent, pine } = server((device) => (device === 2 ? 401 : 201));
    const refusedWhole: TagPine = {
      post: pine.post,
      request: async () => ({ responses: [1, 2, 3].map((device) => ({ id: String(device), status: 401 })) }),
    };
    const result = await createNewTags(refusedWhole, [1, 2, 3], { key: "rack", value: "r1" }, 50);
    expect(result.succeeded.sort()).toEqual([1, 3]);
    expect(result.failed.map((failure) => failure.item)).toEqual([2]);
    expect(posted(sent)).toEqual([1, 2, 3]);
  });

  it("falls back to a POST per device when the batch request itself fails, and sends nothing for no devices", async () => {
    const { sent, pine } = server(() => 201, true);
    expect(await createNewTags(pine, [4, 5], { key: "k", value: "" }, 50)).toEqual({ succeeded: [4, 5], failed: [] });
    expect(posted(sent)).toEqual(["$batch", 4, 5]);
    const idle = server(() => 201);
    expect(await createNewTags(idle.pine, [], { key: "k", value: "" }, 50)).toEqual({ succeeded: [], failed: [] });
    expect(idle.sent).toEqual([]);
  });

  it("waits out the rate limit and sends the page's batch again instead of a POST per device", async () => {
    const { sent, pine } = server(() => 201);
    let refusals = 1;
    const limited: TagPine = {
      post: pine.post,
      async request(params) {
        if (refusals-- > 0) {
          sent.push(params);
          const headers = new Headers({ "Retry-After": "42" });
          throw Object.assign(new Error("Too Many Requests"), { statusCode: 429, responseHeaders: headers });
        }
        return pine.request(params);
      },
    };
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const result = await createNewTags(limited, [1, 2], { key: "rack", value: "r1" }, 50, sleep);
    expect(result).toEqual({ succeeded: [1, 2], failed: [] });
    expect(waits).toEqual([42_000]);
    expect(posted(sent)).toEqual(["$batch", "$batch"]);
  });
});
