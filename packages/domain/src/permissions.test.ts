import { describe, expect, it } from "vitest";
import { allows, FLEET_ROLE_PERMISSIONS, fleetRoleRefusal, fleetRolesAllowing, strongestRole } from "./permissions.ts";

describe("fleet role permissions (spec 2 §6)", () => {
  it("gives members nothing and observers read-only access", () => {
    expect(FLEET_ROLE_PERMISSIONS.member).toEqual([]);
    expect(FLEET_ROLE_PERMISSIONS.observer.every((p) => p.endsWith(".read"))).toBe(true);
    expect(allows(FLEET_ROLE_PERMISSIONS.observer, "application", "read")).toBe(true);
  });

  it("lets only administrator, developer and operator delete devices", () => {
    expect(fleetRolesAllowing("device", "delete")).toEqual(["operator", "developer", "administrator"]);
  });

  it("lets every role from safe-operator up update devices", () => {
    expect(fleetRolesAllowing("device", "update")).toEqual([
      "safe-operator",
      "operator",
      "safe-developer",
      "developer",
      "administrator",
    ]);
  });

  it("keeps fleet creation, deletion and transfer for administrators (decision 1)", () => {
    for (const action of ["create", "delete", "transfer", "change-type"]) {
      expect(fleetRolesAllowing("application", action)).toEqual(["administrator"]);
    }
    expect(fleetRolesAllowing("application", "update")).toEqual(["developer", "administrator"]);
  });

  it("gives safe-operators device variables and tags but no config variables or supervisor writes (decision 2)", () => {
    const safeOperator = FLEET_ROLE_PERMISSIONS["safe-operator"];
    for (const action of ["read", "create", "update", "delete"]) {
      expect(allows(safeOperator, "device_environment_variable", action)).toBe(true);
      expect(allows(safeOperator, "device_tag", action)).toBe(true);
    }
    expect(allows(safeOperator, "device_config_variable", "read")).toBe(false);
    expect(allows(safeOperator, "device", "supervisor-proxy-write")).toBe(false);
    expect(allows(safeOperator, "device", "move")).toBe(false);
    expect(allows(safeOperator, "device", "delete")).toBe(false);
  });

  it("gives fleet configuration variables to developers and administrators, reading to safe-developers (decision 9)", () => {
    expect(fleetRolesAllowing("application_config_variable", "update")).toEqual(["developer", "administrator"]);
    expect(fleetRolesAllowing("application_config_variable", "read")).toEqual([
      "safe-developer",
      "developer",
      "administrator",
    ]);
    expect(fleetRolesAllowing("device_config_variable", "update")).toEqual([
      "operator",
      "safe-developer",
      "developer",
      "administrator",
    ]);
  });

  it("lets safe-developers tag releases but not delete the tags", () => {
    expect(allows(FLEET_ROLE_PERMISSIONS["safe-developer"], "release_tag", "update")).toBe(true);
    expect(allows(FLEET_ROLE_PERMISSIONS["safe-developer"], "release_tag", "delete")).toBe(false);
    expect(allows(FLEET_ROLE_PERMISSIONS["safe-developer"], "device", "delete")).toBe(false);
  });

  it("merges roles by ranking", () => {
    expect(strongestRole(["observer", "developer", "safe-operator"])).toBe("developer");
    expect(strongestRole(["member", "support_agent", "administrator"])).toBe("support_agent");
    expect(strongestRole([])).toBeUndefined();
  });
});

describe("fleetRoleRefusal (spec 2 §6, spec 1 §6.2)", () => {
  const paid = { paidPlan: true, planFeatures: ["preview:safe-roles"] };
  const free = { paidPlan: false, planFeatures: [] };
  it("refuses paid-only roles on free plans and operator roles outside fleets", () => {
    expect(fleetRoleRefusal("operator", { ...free, applicationClass: "fleet" })).toBe("paid_only_role");
    expect(fleetRoleRefusal("safe-developer", { ...free, applicationClass: "block" })).toBe("paid_only_role");
    expect(fleetRoleRefusal("safe-operator", { ...paid, applicationClass: "app" })).toBe("operator_role_fleets_only");
    expect(fleetRoleRefusal("operator", { ...paid, applicationClass: "fleet" })).toBeUndefined();
    expect(fleetRoleRefusal("developer", { ...free, applicationClass: "block" })).toBeUndefined();
    expect(fleetRoleRefusal("observer", { ...free, applicationClass: "fleet" })).toBeUndefined();
  });

  it("the limited roles need a plan providing preview:safe-roles; operator only a paid plan", () => {
    const legacy = { paidPlan: true, planFeatures: ["device:microservices", "support:community"] };
    expect(fleetRoleRefusal("safe-developer", { ...legacy, applicationClass: "fleet" })).toBe(
      "limited_roles_not_in_plan",
    );
    expect(fleetRoleRefusal("safe-operator", { ...legacy, applicationClass: "fleet" })).toBe(
      "limited_roles_not_in_plan",
    );
    expect(fleetRoleRefusal("operator", { ...legacy, applicationClass: "fleet" })).toBeUndefined();
    expect(fleetRoleRefusal("safe-developer", { ...paid, applicationClass: "block" })).toBeUndefined();
    expect(fleetRoleRefusal("safe-operator", { ...paid, applicationClass: "fleet" })).toBeUndefined();
  });
});
