import { describe, expect, it } from "vitest";
import {
  FREE_PLAN_ACCESS,
  fleetCan,
  fleetRoleOf,
  fleetRoleOptions,
  isLastAdministrator,
  isValidEmail,
  organizationAbilities,
  ROLE_PRICES,
} from "./access.ts";
import { logoProblem } from "./logo.tsx";

describe("organization abilities (spec 3 §6)", () => {
  it("administrators manage everything; members nothing", () => {
    const admin = organizationAbilities("administrator", 2);
    expect(admin).toMatchObject({
      rename: true,
      manageMembers: true,
      manageTeams: true,
      accessBilling: true,
      createFleets: true,
    });
    const member = organizationAbilities("member", 1);
    expect(member).toMatchObject({
      rename: false,
      manageMembers: false,
      manageTeams: false,
      accessBilling: false,
      delete: false,
    });
  });

  it("only the sole administrator may delete; everyone else leaves; the last administrator cannot leave", () => {
    expect(organizationAbilities("administrator", 1)).toMatchObject({ delete: true, leave: "last_admin" });
    expect(organizationAbilities("administrator", 2)).toMatchObject({ delete: false, leave: "allowed" });
    expect(organizationAbilities("member", 1)).toMatchObject({ delete: false, leave: "allowed" });
    expect(organizationAbilities(undefined, 1)).toMatchObject({ delete: false, leave: "hidden" });
  });

  it("knows the last administrator", () => {
    expect(isLastAdministrator("administrator", 1)).toBe(true);
    expect(isLastAdministrator("administrator", 2)).toBe(false);
    expect(isLastAdministrator("member", 1)).toBe(false);
  });
});

describe("fleet roles from user_access_roles", () => {
  it("takes the strongest role; none is member", () => {
    expect(fleetRoleOf(["observer", "developer"])).toBe("developer");
    expect(fleetRoleOf([])).toBe("member");
    expect(fleetRoleOf(["bogus"])).toBe("member");
  });

  it("observers read but do not edit; administrators manage members", () => {
    expect(fleetCan("observer", "application", "read")).toBe(true);
    expect(fleetCan("observer", "application", "update")).toBe(false);
    expect(fleetCan("developer", "application", "update")).toBe(true);
    expect(fleetCan("developer", "user_application_membership", "all")).toBe(false);
    expect(fleetCan("administrator", "user_application_membership", "create")).toBe(true);
  });
});

describe("fleet role picker (spec 2 §6)", () => {
  it("prices: observer free, operators $29, developers and administrators $49", () => {
    expect(ROLE_PRICES).toEqual({
      observer: 0,
      "safe-operator": 29,
      operator: 29,
      "safe-developer": 49,
      developer: 49,
      administrator: 49,
    });
  });

  it("free plans: paid-only roles are offered but disabled", () => {
    const options = fleetRoleOptions({ ...FREE_PLAN_ACCESS, applicationClass: "fleet" });
    expect(options.map((o) => [o.role, o.disabled ?? null])).toEqual([
      ["observer", null],
      ["safe-operator", "paid_only_role"],
      ["operator", "paid_only_role"],
      ["safe-developer", "paid_only_role"],
      ["developer", null],
    ]);
  });

  const pilot = { paidPlan: true, planFeatures: ["device:microservices", "preview:safe-roles"] };
  it("paid plans enable every role; operator roles only for fleets; limited roles only where allowed", () => {
    expect(fleetRoleOptions({ ...pilot, applicationClass: "fleet" }).every((o) => !o.disabled)).toBe(true);
    expect(fleetRoleOptions({ ...pilot, applicationClass: "block" }).map((o) => o.role)).toEqual([
      "observer",
      "safe-developer",
      "developer",
    ]);
    expect(
      fleetRoleOptions({ ...pilot, applicationClass: "fleet", limitedRolesAllowed: false }).map((o) => o.role),
    ).toEqual(["observer", "operator", "developer"]);
  });

  it("limited roles only when the plan provides preview:safe-roles (a paid legacy plan may not)", () => {
    const legacy = { paidPlan: true, planFeatures: ["device:microservices"] };
    expect(fleetRoleOptions({ ...legacy, applicationClass: "fleet" }).map((o) => [o.role, o.disabled ?? null])).toEqual(
      [
        ["observer", null],
        ["operator", null],
        ["developer", null],
      ],
    );
  });
});

describe("inputs", () => {
  it("logo: PNG or JPEG, at most 1,000,000 bytes", () => {
    expect(logoProblem({ type: "image/png", size: 1_000_000 })).toBeUndefined();
    expect(logoProblem({ type: "image/jpeg", size: 10 })).toBeUndefined();
    expect(logoProblem({ type: "image/gif", size: 10 })).toBe("logo_invalid");
    expect(logoProblem({ type: "image/png", size: 1_000_001 })).toBe("logo_too_large");
  });

  it("emails decide between an invitation and a username", () => {
    expect(isValidEmail(" ann@example.com ")).toBe(true);
    expect(isValidEmail("ann")).toBe(false);
  });
});
