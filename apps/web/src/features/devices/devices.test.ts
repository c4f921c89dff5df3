import { describe, expect, it } from "vitest";
import { batchReport, runBatch } from "./batch.ts";
import {
  actionBlockedReason,
  deviceCoordinates,
  deviceIsOnline,
  deviceListFilter,
  deviceWebUrl,
  localModeProblem,
  metricLevel,
  usedPercent,
} from "./data.ts";

describe("device metric bars", () => {
  it("are green up to 60 %, warning up to 80 %, error above", () => {
    expect(metricLevel(0)).toBe("success");
    expect(metricLevel(60)).toBe("success");
    expect(metricLevel(61)).toBe("warning");
    expect(metricLevel(80)).toBe("warning");
    expect(metricLevel(81)).toBe("error");
  });

  it("compute a capped percentage and nothing without a total", () => {
    expect(usedPercent(512, 1024)).toBe(50);
    expect(usedPercent(2000, 1024)).toBe(100);
    expect(usedPercent(null, 1024)).toBeUndefined();
    expect(usedPercent(10, 0)).toBeUndefined();
  });
});

describe("device map coordinates", () => {
  const none = { custom_latitude: null, custom_longitude: null, latitude: null, longitude: null };
  it("prefer custom coordinates and parse them as integers", () => {
    expect(deviceCoordinates({ ...none, latitude: "52.52", longitude: "13.40" })).toEqual([52, 13]);
    expect(
      deviceCoordinates({ custom_latitude: "-33.9", custom_longitude: "151.2", latitude: "52.5", longitude: "13.4" }),
    ).toEqual([-33, 151]);
  });
  it("leave a device without coordinates off the map", () => {
    expect(deviceCoordinates(none)).toBeUndefined();
    expect(deviceCoordinates({ ...none, latitude: "north", longitude: "1" })).toBeUndefined();
  });
});

describe("local mode", () => {
  const device = { supervisor_version: "14.1.0", os_version: "balenaOS 5.3.0", os_variant: "dev" };
  it("needs supervisor 4, an OS newer than 1.x and a development image", () => {
    expect(localModeProblem(device)).toBeUndefined();
    expect(localModeProblem({ ...device, supervisor_version: "3.9.0" })).toBe("supervisor");
    expect(localModeProblem({ ...device, supervisor_version: null })).toBe("supervisor");
    expect(localModeProblem({ ...device, os_version: "Resin OS 1.26.0" })).toBe("os");
    expect(localModeProblem({ ...device, os_variant: "prod" })).toBe("variant");
  });
});

describe("the device list filter", () => {
  it("keeps to the fleet and matches the text in several fields", () => {
    expect(deviceListFilter(7, "  ")).toEqual({ belongs_to__application: 7 });
    const filter = deviceListFilter(7, "Kiosk") as { $or: unknown[] };
    expect(filter.$or).toHaveLength(6);
    expect(JSON.stringify(filter)).toContain('"kiosk"');
  });
});

describe("batch actions", () => {
  const fail = (status: number, message = "nope") =>
    Object.assign(new Error(message), { statusCode: status, body: message });

  it("succeed when every item succeeds, at most `concurrency` at a time", async () => {
    let running = 0;
    let peak = 0;
    const result = await runBatch(
      [1, 2, 3, 4, 5],
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
      },
      2,
    );
    expect(result.succeeded).toHaveLength(5);
    expect(peak).toBe(2);
    expect(batchReport(result)).toEqual({ severity: "success" });
  });

  it("warn with the count when some fail and fail with the first error when all fail", async () => {
    const some = await runBatch([1, 2, 3], async (n) => {
      if (n !== 2) throw fail(400, "Device must be online");
    });
    expect(batchReport(some)).toMatchObject({ severity: "warning", failedCount: 2 });
    const all = await runBatch([1, 2], async () => {
      throw fail(400, "Device must be online");
    });
    const report = batchReport(all);
    expect(report.severity).toBe("error");
    expect(report.severity === "error" && report.message.startsWith("Operation failed with: ")).toBe(true);
  });

  it("names every different failure once, with how many items it hit", async () => {
    const result = await runBatch([1, 2, 3, 4], async (n) => {
      if (n === 1) throw fail(400, "Device must be online");
      if (n === 2) throw fail(400, "Device must be online");
      if (n === 3) throw fail(400, "Name too long");
    });
    expect(batchReport(result)).toEqual({
      severity: "warning",
      failedCount: 3,
      message: "Operation failed with: Request error: Device must be online. (×2); Request error: Name too long.",
    });
  });

  it("asks to force when an update lock blocks the action", async () => {
    const result = await runBatch([1, 2], async (n) => {
      if (n === 1) throw fail(423, "Updates are locked");
    });
    expect(batchReport(result)).toEqual({ severity: "locked", lockedCount: 1 });
  });

  it("names the devices that need an update first (user_action_denied)", async () => {
    const result = await runBatch(["a", "b", "c"], async (uuid) => {
      if (uuid === "b") throw Object.assign(new Error("Request error"), { statusCode: 400, body: "updateRequired" });
      if (uuid === "c") throw fail(400, "Device must be online");
    });
    // The device that was offline is reported too, not hidden behind the update-required dialog.
    expect(batchReport(result)).toEqual({
      severity: "update_required",
      denied: ["b"],
      others: { count: 1, message: "Operation failed with: Request error: Device must be online." },
    });
  });
});

describe("device actions", () => {
  const device = {
    overall_status: "operational" as const,
    is_active: true,
    last_connectivity_event: "2026-01-01T00:00:00Z",
    is_connected_to_vpn: true,
  };
  it("wait for a device that never connected (inactive, as balena says) or is configuring to be provisioned", () => {
    expect(
      actionBlockedReason({
        ...device,
        overall_status: "inactive",
        last_connectivity_event: null,
        is_connected_to_vpn: false,
      }),
    ).toBe("not_fully_provisioned");
    expect(actionBlockedReason({ ...device, overall_status: "configuring" })).toBe("not_fully_provisioned");
  });
  it("need the device online otherwise", () => {
    expect(actionBlockedReason({ ...device, overall_status: "disconnected", is_connected_to_vpn: false })).toBe(
      "must_be_online",
    );
    expect(actionBlockedReason(device)).toBeUndefined();
  });
});

describe("device web URL and online state (spec 2 §2, §3)", () => {
  const fleet = (supports: boolean) => [{ application_type: [{ supports_web_url: supports }] }] as never;
  it("has a web URL only when its fleet's type supports one and a base domain is set", () => {
    expect(deviceWebUrl({ uuid: "abc", belongs_to__application: fleet(true) }, "devices.example")).toBe(
      "https://abc.devices.example",
    );
    expect(deviceWebUrl({ uuid: "abc", belongs_to__application: fleet(false) }, "devices.example")).toBeUndefined();
    expect(deviceWebUrl({ uuid: "abc", belongs_to__application: fleet(true) }, null)).toBeUndefined();
  });

  it("is online by heartbeat or cloudlink (deactivation needs it offline)", () => {
    expect(deviceIsOnline({ api_heartbeat_state: "offline", is_connected_to_vpn: false })).toBe(false);
    expect(deviceIsOnline({ api_heartbeat_state: "timeout", is_connected_to_vpn: false })).toBe(true);
    expect(deviceIsOnline({ api_heartbeat_state: "unknown", is_connected_to_vpn: true })).toBe(true);
  });
});
