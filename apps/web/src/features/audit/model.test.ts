import { describe, expect, it } from "vitest";
import {
  actionParts,
  actorOf,
  auditQuery,
  csvFileName,
  detailItems,
  EMPTY_AUDIT_FILTER,
  filterProblem,
  localTimeToIso,
} from "./model.ts";

/** The audit log page's helpers (docs/audit-and-webhooks.md "Audit log"). */
describe("audit log filters → query", () => {
  it("leaves empty fields out and trims the others", () => {
    expect(auditQuery(EMPTY_AUDIT_FILTER).toString()).toBe("");
    const query = auditQuery({ ...EMPTY_AUDIT_FILTER, action: "variable.", targetType: "fleet", targetId: " 7 " });
    expect(Object.fromEntries(query)).toEqual({ action: "variable.", target_type: "fleet", target_id: "7" });
  });

  it("sends the actor only as a user id, and pages with before", () => {
    expect(auditQuery({ ...EMPTY_AUDIT_FILTER, actor: "12" }, 340).toString()).toBe("actor=12&before=340");
    expect(auditQuery({ ...EMPTY_AUDIT_FILTER, actor: "admin" }, null).toString()).toBe("");
  });

  it("turns local times into ISO 8601 and refuses a range that ends before it starts", () => {
    const from = "2026-11-25T10:00";
    expect(localTimeToIso(from)).toBe(new Date(from).toISOString());
    expect(localTimeToIso("")).toBeUndefined();
    expect(localTimeToIso("not a time")).toBeUndefined();
    const query = auditQuery({ ...EMPTY_AUDIT_FILTER, from, to: "2026-11-26T10:00" });
    expect(query.get("from")).toBe(new Date(from).toISOString());
    expect(query.get("to")).toBe(new Date("2026-11-26T10:00").toISOString());
    expect(filterProblem({ ...EMPTY_AUDIT_FILTER, from, to: "2026-11-24T10:00" })).toBe("range");
    expect(filterProblem({ ...EMPTY_AUDIT_FILTER, from })).toBeUndefined();
  });
});

describe("audit log entries as people read them", () => {
  it("splits an action into its category and verb", () => {
    expect(actionParts("membership.role_changed")).toEqual({ category: "membership", verb: "role_changed" });
    expect(actionParts("terminal_session")).toEqual({ category: "terminal_session", verb: undefined });
  });

  it("names the actor and the API key used, by name or by id once the key is gone", () => {
    expect(actorOf({ user: 3, username: "ana", api_key: null, api_key_name: null })).toEqual({
      name: "ana",
      key: undefined,
    });
    expect(actorOf({ user: 3, username: "ana", api_key: 9, api_key_name: "ci" })).toEqual({ name: "ana", key: "ci" });
    expect(actorOf({ user: 3, username: null, api_key: 9, api_key_name: null })).toEqual({ name: "#3", key: "#9" });
    expect(actorOf({ user: null, username: null, api_key: null })).toEqual({ name: undefined, key: undefined });
  });

  it("shows details as labelled values, never as raw JSON", () => {
    expect(detailItems(null)).toEqual([]);
    expect(detailItems({ name: "DB_URL", fields: ["url", "events"], is_enabled: false })).toEqual([
      { label: "Name", value: "DB_URL" },
      { label: "Fields", value: "url, events" },
      { label: "Is enabled", value: "no" },
    ]);
    expect(detailItems({ role: { from: "member", to: "administrator" } })).toEqual([
      { label: "Role", value: "from member, to administrator" },
    ]);
    for (const item of detailItems({ nested: { a: [1, { b: 2 }] } })) expect(item.value).not.toMatch(/[{}"]/);
    // A bulk command's entry: the command first, units named.
    expect(detailItems({ target: "host", command: "uname -a", timeout_s: 30, device_count: 6 })).toEqual([
      { label: "Command", value: "uname -a" },
      { label: "Target", value: "host" },
      { label: "Timeout (s)", value: "30" },
      { label: "Device count", value: "6" },
    ]);
  });

  it("names the export after the organization and the day", () => {
    expect(csvFileName(3, new Date("2026-11-25T23:00:00Z"))).toBe("audit-log-org-3-2026-11-25.csv");
    expect(csvFileName(undefined, new Date("2026-11-25T23:00:00Z"))).toBe("audit-log-all-2026-11-25.csv");
  });
});
