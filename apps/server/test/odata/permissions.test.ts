import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/index.ts";
import { FlotillaError } from "../../src/errors.ts";
import { readImpliedByParent } from "../../src/odata/implied-access.ts";
import { compileRead, createPermissions, type Permissions, parseODataUrl } from "../../src/odata/index.ts";
import { createTestDatabase } from "../harness.ts";
import { ACTORS, createFixture, failure, MEMBER_PERMISSIONS, memberOf, model, requester } from "./fixture.ts";

let db: Database;
let drop: () => Promise<void>;
let api: ReturnType<typeof requester>;

beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
  await createFixture(db);
  api = requester(db);
});
afterAll(() => drop());

const alice = memberOf(ACTORS.alice);
const bob = memberOf(ACTORS.bob);
const carol = memberOf(ACTORS.carol);
const grants = (...permissions: string[]): Permissions =>
  createPermissions({ model, permissions, actorId: ACTORS.alice });

describe("permission strings", () => {
  it("grants everything with resin.all, every action with resin.x.all, and nothing unnamed", () => {
    const everything = grants("resin.all");
    expect(everything.filter("device", "delete")).toBe("all");
    const some = grants(
      "resin.device.all",
      "resin.device_tag.read",
      "resin.device_environment_variable.read?value eq 'x'",
    );
    expect(some.filter("device", "update")).toBe("all");
    expect(some.filter("device_tag", "read")).toBe("all");
    expect(some.filter("device_tag", "create")).toBe("none");
    expect(some.filter("organization", "read")).toBe("none");
    // Aliases reach the canonical name.
    expect(some.filter("device__has__env_var_name", "read")).toHaveLength(1);
  });

  it("ORs several filters of one grant, and an unconditional grant wins", async () => {
    const two = grants("resin.device.read?id eq 1", "resin.device.read?id eq 6");
    expect(await api.ids("/device", two)).toEqual([1, 6]);
    const wins = grants("resin.device.read?id eq 1", "resin.device.read");
    expect(wins.filter("device", "read")).toBe("all");
  });

  it("ignores resources the model does not have and custom actions, and refuses malformed strings", () => {
    expect(grants("resin.gadget.read").filter("device", "read")).toBe("none");
    expect(grants("resin.device.ssh").filter("device", "read")).toBe("none");
    expect(() => grants("device.read.now.please")).toThrow(/malformed/);
    const broken = grants("resin.device.read?id eq");
    expect(() => broken.filter("device", "read")).toThrow(/cannot parse/);
  });

  it("answers a permission that does not fit the model as the server's error, naming nothing to the client", async () => {
    const error = await failure(api.get("/device", grants("resin.device.read?gadget/any(g:g/id eq 1)")));
    expect(error).not.toBeInstanceOf(FlotillaError);
    expect(error.message).toContain("permissions: the read filter of device");
  });

  it("gives nothing through @__ACTOR_ID without an actor", async () => {
    const anonymous = createPermissions({ model, permissions: MEMBER_PERMISSIONS });
    expect(anonymous.filter("device", "read")).toBe("none");
    expect(await failure(api.get("/device", anonymous))).toMatchObject({ statusCode: 401, code: "unauthorized" });
  });
});

describe("canAccess()", () => {
  const delegated = grants(
    "resin.organization.read?organization_membership/any(m:m/user/any(u:u/actor eq @__ACTOR_ID))",
    // A cycle (application ↔ device) must neither loop nor grant anything by itself.
    "resin.application.read?organization/canAccess() or owns__device/canAccess()",
    "resin.device.read?belongs_to__application/canAccess()",
    "resin.device_tag.read?device/canAccess()",
  );

  it("delegates a permission to the navigated resource's permission", async () => {
    expect(await api.ids("/device", delegated)).toEqual([1, 2, 3, 4]);
    expect(await api.ids("/device_tag", delegated)).toEqual([1, 2, 3, 4]);
    expect(await api.ids("/application", delegated)).toEqual([1, 2]);
    expect(await api.get("/device(1)?$select=id&$expand=device_tag/$count", delegated)).toEqual([
      { id: 1, device_tag: 2 },
    ]);
  });

  it("asks the target for the same action", async () => {
    const updates = grants(
      "resin.device.read",
      "resin.device.update?belongs_to__application/canAccess()",
      "resin.application.update?id eq 2",
    );
    await api.send("PATCH", "/device?$filter=id in (1, 4)", { permissions: updates, body: { note: "via app" } });
    expect(await api.get("/device?$select=id,note&$filter=id in (1, 4)")).toEqual([
      { id: 1, note: "rack 1" },
      { id: 4, note: "via app" },
    ]);
  });

  it("is refused in a client's filter", async () => {
    expect(await failure(api.get("/device?$filter=belongs_to__application/canAccess()"))).toMatchObject({
      statusCode: 400,
      message: "canAccess() is only for permissions",
    });
  });
});

describe("the read filter of the requested resource", () => {
  it("limits every member to their organizations' fleets and devices", async () => {
    expect(await api.ids("/device", alice)).toEqual([1, 2, 3, 4]);
    expect(await api.ids("/device", bob)).toEqual([5, 6]);
    expect(await api.ids("/device", carol)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await api.ids("/application", bob)).toEqual([3]);
    expect(await api.ids("/organization", alice)).toEqual([1]);
  });

  it("applies to keys and /$count", async () => {
    expect(await api.ids("/device(5)", alice)).toEqual([]);
    expect(await api.ids("/device(uuid='bbbb0005')", bob)).toEqual([5]);
    expect(await api.get<number>("/device/$count", alice)).toBe(4);
    expect(await api.get<number>("/device/$count?$filter=is_online", bob)).toBe(1);
  });

  it("answers 401 when the resource is not readable at all", async () => {
    const devicesOnly = grants("resin.device.read");
    expect(await failure(api.get("/organization", devicesOnly))).toMatchObject({ statusCode: 401 });
    expect(await failure(api.get("/organization/$count", devicesOnly))).toMatchObject({ statusCode: 401 });
  });

  it("evaluates permission filters with full visibility of what they navigate", async () => {
    // No read access to user or membership, yet the organization filter walks through them.
    const orgsOnly = grants(
      `resin.organization.read?organization_membership/any(m:m/user/any(u:u/actor eq @__ACTOR_ID))`,
    );
    expect(await api.ids("/organization", orgsOnly)).toEqual([1]);
  });
});

describe("the read filter of every resource a query touches", () => {
  // Devices are all readable; tags only when not 'rack', devices of tags only when online.
  const tagsLimited = grants("resin.device.read", "resin.device_tag.read?tag_key ne 'rack'");
  const devicesLimited = grants("resin.device.read?is_online", "resin.device_tag.read");

  it("applies inside $expand", async () => {
    expect(await api.get("/device(1)?$select=id&$expand=device_tag($select=tag_key)", tagsLimited)).toEqual([
      { id: 1, device_tag: [{ tag_key: "location" }] },
    ]);
    expect(await api.get("/device_tag?$select=id&$filter=id le 3&$expand=device($select=id)", devicesLimited)).toEqual([
      { id: 1, device: [{ id: 1 }] },
      { id: 2, device: [{ id: 1 }] },
      { id: 3, device: [] },
    ]);
  });

  it("applies inside any() and all()", async () => {
    expect(await api.ids("/device?$filter=device_tag/any(t:t/tag_key eq 'rack')", tagsLimited)).toEqual([]);
    expect(await api.ids("/device?$filter=device_tag/any(t:t/tag_key eq 'location')", tagsLimited)).toEqual([
      1, 2, 4, 5, 7,
    ]);
    // Device 1's rack tag is invisible, so all its (visible) tags are locations.
    expect(await api.ids("/device?$filter=device_tag/all(t:t/tag_key eq 'location')", tagsLimited)).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(await api.ids("/device_tag?$filter=device/any(d:d/device_name eq 'beta')", devicesLimited)).toEqual([]);
  });

  it("applies to /$count of the resource and to nav/$count in $filter, $select, $expand and $orderby", async () => {
    expect(await api.get<number>("/device_tag/$count", tagsLimited)).toBe(5);
    expect(await api.ids("/device?$filter=device_tag/$count eq 2", tagsLimited)).toEqual([]);
    expect(await api.get("/device(1)?$select=id,device_tag/$count", tagsLimited)).toEqual([{ id: 1, device_tag: 1 }]);
    expect(await api.get("/device(1)?$select=id&$expand=device_tag/$count", tagsLimited)).toEqual([
      { id: 1, device_tag: 1 },
    ]);
    expect(await api.get("/device(1)?$select=id&$expand=device_tag/$count($filter=value eq '1')", tagsLimited)).toEqual(
      [{ id: 1, device_tag: 0 }],
    );
    // Device 1 has two tags, one visible: it ties with device 2 and the id decides.
    expect(await api.ids("/device?$orderby=device_tag/$count asc&$filter=id le 3", tagsLimited)).toEqual([3, 1, 2]);
    expect(await api.ids("/device?$orderby=device_tag/$count asc&$filter=id le 3")).toEqual([3, 2, 1]);
  });

  it("applies to navigation paths in $filter and $orderby", async () => {
    expect(await api.ids("/device_tag?$filter=device/device_name eq 'beta'", devicesLimited)).toEqual([]);
    expect(await api.ids("/device_tag?$filter=device/device_name eq 'alpha'", devicesLimited)).toEqual([1, 2]);
    // Hidden devices order as null (first when descending).
    expect(await api.ids("/device_tag?$orderby=device/device_name desc&$filter=id le 4", devicesLimited)).toEqual([
      3, 4, 1, 2,
    ]);
  });

  it("applies at every level of nested lambdas and expansions", async () => {
    // alice reads only her own membership and user, so carol's membership of acme is invisible to her.
    expect(
      await api.ids("/organization?$filter=organization_membership/any(m:m/user/any(u:u/username eq 'carol'))", alice),
    ).toEqual([]);
    expect(
      await api.ids("/organization?$filter=organization_membership/any(m:m/user/any(u:u/username eq 'carol'))", carol),
    ).toEqual([1, 2]);
    expect(
      await api.get(
        "/organization(1)?$select=id&$expand=organization_membership($select=id;$expand=user($select=username))",
        alice,
      ),
    ).toEqual([{ id: 1, organization_membership: [{ id: 1, user: [{ username: "alice" }] }] }]);
    expect(await api.ids("/application?$expand=owns__device($expand=device_tag)", bob)).toEqual([3]);
  });

  it("makes a resource without read access match nothing inside queries", async () => {
    const noTags = grants("resin.device.read");
    expect(
      await api.get("/device(1)?$select=id&$expand=device_tag,device_environment_variable/$count", noTags),
    ).toEqual([{ id: 1, device_tag: [], device_environment_variable: 0 }]);
    expect(await api.ids("/device?$filter=device_tag/any(t:1 eq 1)", noTags)).toEqual([]);
    expect(await api.ids("/device?$filter=device_tag/all(t:1 eq 2)", noTags)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await api.ids("/device?$filter=belongs_to__application/slug eq 'acme/a1'", noTags)).toEqual([]);
  });
});

describe("a child's read permission implied by its parent's", () => {
  const APP_OF_DEVICE =
    "belongs_to__application/any(a:a/organization/any(o:o/organization_membership/any(m:m/user/any(u:u/actor eq @__ACTOR_ID))))";
  const sqlOf = (url: string, permissions: Permissions) =>
    compileRead(model, permissions, parseODataUrl(url)).query.text;
  const memberships = (sql: string) => sql.split("fx_organization_membership").length - 1;

  it("checks a device's tags no more once the device is checked, in a filter, an OR's branch and an expansion", async () => {
    const plain = memberships(sqlOf("/device?$select=id", alice));
    expect(plain).toBeGreaterThan(0);
    for (const url of [
      "/device?$select=id&$filter=device_tag/any(t:t/value eq 'berlin')",
      "/device?$select=id&$filter=device_name eq 'x' or device_tag/any(t:t/value eq 'berlin')",
      "/device?$select=id&$expand=device_tag($select=value)",
    ]) {
      expect(memberships(sqlOf(url, alice)), url).toBe(plain);
    }
    expect(await api.ids("/device?$filter=device_name eq 'x' or device_tag/any(t:t/value eq 'berlin')", alice)).toEqual(
      [1, 4],
    );
    expect(await api.ids("/device?$filter=device_tag/any(t:t/value eq 'tokyo')", alice)).toEqual([]);
  });

  it("keeps the check where the child's permission says more than its parent's, or names it otherwise", async () => {
    const stricter = grants(
      `resin.device.read?${APP_OF_DEVICE}`,
      `resin.device_tag.read?device/any(d:d/${APP_OF_DEVICE}) and tag_key eq 'rack'`,
    );
    expect(memberships(sqlOf("/device?$select=id&$filter=device_tag/any(t:t/value eq 'berlin')", stricter))).toBe(
      2 * memberships(sqlOf("/device?$select=id", stricter)),
    );
    // Device 1's "location" tag says berlin, but its tags other than "rack" are not the caller's to read.
    expect(await api.ids("/device?$filter=device_tag/any(t:t/value eq 'berlin')", stricter)).toEqual([]);
    expect(await api.ids("/device?$filter=device_tag/any(t:t/value eq '1')", stricter)).toEqual([1]);

    const parent = [`belongs_to__application/any(a:a/id eq 1)`] as const;
    const implied = (child: string) =>
      readImpliedByParent(
        grants(`resin.device_tag.read?${child}`).filter("device_tag", "read"),
        grants(`resin.device.read?${parent[0]}`).filter("device", "read"),
        "device",
      );
    expect(implied("device/any(d:d/belongs_to__application/any(x:x/id eq 1))")).toBe(true);
    expect(implied("device/canAccess()")).toBe(true);
    expect(implied("device/any(d:d/belongs_to__application/any(x:x/id eq 2))")).toBe(false);
    // Inside the lambda over the fleet, `d/` is the device, not the fleet.
    expect(implied("device/any(d:belongs_to__application/any(x:d/id eq 1))")).toBe(false);
    expect(implied("device/any(d:d/belongs_to__application/any(x:x/id eq 1)) and tag_key eq 'a'")).toBe(false);
  });
});
