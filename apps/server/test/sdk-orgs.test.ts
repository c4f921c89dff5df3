import { getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { linkIn, type MailServer, startMailServer } from "./support/mail.ts";

let t: TestApp;
let mail: MailServer;
beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ SMTP_URL: mail.url });
});
afterAll(async () => {
  await t.close();
  await mail.close();
});

async function sdkAs(token: string) {
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(token);
  return sdk;
}
const tokenOf = (link: string) => link.split("/").pop() ?? "";

describe("balena-sdk organization calls", () => {
  it("organization.invite.create/getAll/getAllByOrganization/revoke/accept", async () => {
    const admin = await t.factories.user();
    const invitee = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user] });
    const sdk = await sdkAs(admin.token);

    const invite = await sdk.models.organization.invite.create(org.handle, {
      invitee: invitee.user.email ?? "",
      roleName: "member",
      message: "Join us",
    });
    expect(invite.id).toEqual(expect.any(Number));
    await expect(sdk.models.organization.invite.create(org.id, { invitee: invitee.user.email ?? "" })).rejects.toThrow(
      "This user has already been invited",
    );
    await expect(sdk.models.organization.invite.create(org.id, { invitee: "nope" })).rejects.toThrow(
      "Invalid email address",
    );
    const listed = await sdk.models.organization.invite.getAllByOrganization(org.id, {
      $select: ["id", "message"],
      $expand: { invitee: { $select: "email" } },
    });
    expect(listed).toMatchObject([{ id: invite.id, message: "Join us", invitee: [{ email: invitee.user.email }] }]);
    expect((await sdk.models.organization.invite.getAll()).map((i) => i.id)).toContain(invite.id);

    const other = await sdk.models.organization.invite.create(org.id, { invitee: "revoked-sdk@example.com" });
    await sdk.models.organization.invite.revoke(other.id);
    expect((await sdk.models.organization.invite.getAllByOrganization(org.id)).map((i) => i.id)).toEqual([invite.id]);

    const token = tokenOf(linkIn(await mail.next(invitee.user.email ?? "")));
    const inviteeSdk = await sdkAs(invitee.token);
    await expect(inviteeSdk.models.organization.invite.accept("not-a-token")).rejects.toThrow(
      "Invitation invalid or expired",
    );
    await inviteeSdk.models.organization.invite.accept(token);
    expect((await inviteeSdk.models.organization.get(org.id, { $select: "id" })).id).toBe(org.id);
  });

  it("organization.membership.getAllByOrganization/changeRole/remove and the last-admin rule", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const sdk = await sdkAs(admin.token);
    const memberships = await sdk.models.organization.membership.getAllByOrganization(org.id, {
      $select: "id",
      $expand: { user: { $select: "username" }, organization_membership_role: { $select: "name" } },
      $orderby: { id: "asc" },
    });
    expect(memberships).toHaveLength(2);
    const mine = memberships.find((m) => m.user[0]?.username === admin.user.username);
    const theirs = memberships.find((m) => m.user[0]?.username === member.user.username);
    expect(theirs?.organization_membership_role[0]?.name).toBe("member");
    await expect(sdk.models.organization.membership.changeRole(mine?.id ?? 0, "member")).rejects.toThrow(
      "The last administrator of an organization cannot be removed, demoted or leave it",
    );
    await expect(sdk.models.organization.membership.remove(mine?.id ?? 0)).rejects.toThrow(
      "The last administrator of an organization cannot be removed",
    );
    await sdk.models.organization.membership.changeRole(theirs?.id ?? 0, "administrator");
    const after = await sdk.models.organization.membership.get(theirs?.id ?? 0, {
      $select: "id",
      $expand: { organization_membership_role: { $select: "name" } },
    });
    expect(after.organization_membership_role[0]?.name).toBe("administrator");
    await sdk.models.organization.membership.changeRole(theirs?.id ?? 0, "member");
    // The member sees the list too, and leaves.
    const memberSdk = await sdkAs(member.token);
    expect(await memberSdk.models.organization.membership.getAllByOrganization(org.id)).toHaveLength(2);
    await memberSdk.models.organization.membership.remove(theirs?.id ?? 0);
    expect(await sdk.models.organization.membership.getAllByOrganization(org.id)).toHaveLength(1);
  });
});

describe("balena-sdk fleet membership and invitation calls", () => {
  it("application.membership.create(username)/getAllByApplication/changeRole/remove", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const outsider = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const fleet = await t.factories.fleet(org);
    const sdk = await sdkAs(admin.token);
    await expect(
      sdk.models.application.membership.create({ application: fleet.id, username: outsider.user.username }),
    ).rejects.toThrow("is member of the organization");
    const created = await sdk.models.application.membership.create({
      application: fleet.id,
      username: member.user.username,
    });
    const listed = await sdk.models.application.membership.getAllByApplication(fleet.id, {
      $select: "id",
      $expand: { user: { $select: "username" }, application_membership_role: { $select: "name" } },
    });
    expect(listed).toMatchObject([
      {
        id: created.id,
        user: [{ username: member.user.username }],
        application_membership_role: [{ name: "developer" }],
      },
    ]);
    await expect(sdk.models.application.membership.changeRole(created.id, "operator")).rejects.toThrow(
      "access role only available for paid users",
    );
    await sdk.models.application.membership.changeRole(created.id, "observer");
    const changed = await sdk.models.application.membership.get(created.id, {
      $select: "id",
      $expand: { application_membership_role: { $select: "name" } },
    });
    expect(changed.application_membership_role[0]?.name).toBe("observer");
    await sdk.models.application.membership.remove(created.id);
    expect(await sdk.models.application.membership.getAllByApplication(fleet.id)).toEqual([]);
  });

  it("application.invite.create/getAllByApplication/revoke/accept", async () => {
    const admin = await t.factories.user();
    const invitee = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user] });
    const fleet = await t.factories.fleet(org);
    const sdk = await sdkAs(admin.token);
    const invite = await sdk.models.application.invite.create(fleet.slug, {
      invitee: invitee.user.email ?? "",
      roleName: "observer",
      message: "Have a look",
    });
    const revoked = await sdk.models.application.invite.create(fleet.id, { invitee: "gone@example.com" });
    await sdk.models.application.invite.revoke(revoked.id);
    const listed = await sdk.models.application.invite.getAllByApplication(fleet.id, {
      $select: ["id", "message"],
      $expand: { invitee: { $select: "email" }, application_membership_role: { $select: "name" } },
    });
    expect(listed).toMatchObject([
      {
        id: invite.id,
        message: "Have a look",
        invitee: [{ email: invitee.user.email }],
        application_membership_role: [{ name: "observer" }],
      },
    ]);
    const token = tokenOf(linkIn(await mail.next(invitee.user.email ?? "")));
    const inviteeSdk = await sdkAs(invitee.token);
    await inviteeSdk.models.application.invite.accept(token);
    const seen = await inviteeSdk.models.application.get(fleet.id, { $select: ["id", "app_name"] });
    expect(seen.app_name).toBe(fleet.app_name);
    await expect(inviteeSdk.models.application.invite.accept(token)).rejects.toThrow("Invitation invalid or expired");
  });
});

describe("balena-sdk team calls", () => {
  it("team.create/getAllByOrganization/rename/remove, team.membership and team.applicationAccess", async () => {
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const org = await t.factories.organization({ admins: [admin.user], members: [member.user] });
    const fleet = await t.factories.fleet(org);
    const sdk = await sdkAs(admin.token);
    const team = await sdk.models.team.create(org.id, "Operations");
    await expect(sdk.models.team.create(org.handle, "OPERATIONS")).rejects.toThrow(
      '"belongs_to__organization" and "name" must be unique.',
    );
    const second = await sdk.models.team.create(org.id, "Second");
    await sdk.models.team.rename(second.id, "Renamed");
    expect(
      (await sdk.models.team.getAllByOrganization(org.id, { $orderby: { name: "asc" } })).map((x) => x.name),
    ).toEqual(["Operations", "Renamed"]);
    await sdk.models.team.remove(second.id);

    const membership = await sdk.models.team.membership.create({ team: team.id, username: member.user.username });
    expect((await sdk.models.team.membership.getAllByTeam(team.id)).map((m) => m.id)).toEqual([membership.id]);

    const access = await sdk.models.team.applicationAccess.add(team.id, fleet.id, "observer");
    const memberSdk = await sdkAs(member.token);
    expect((await memberSdk.models.application.get(fleet.id, { $select: "id" })).id).toBe(fleet.id);
    await sdk.models.team.applicationAccess.update(access.id, "developer");
    const updated = await sdk.models.team.applicationAccess.get(access.id, {
      $select: "id",
      $expand: { application_membership_role: { $select: "name" } },
    });
    expect(updated.application_membership_role[0]?.name).toBe("developer");
    await expect(sdk.models.team.applicationAccess.update(access.id, "safe-operator")).rejects.toThrow(
      "access role only available for paid users",
    );
    expect((await sdk.models.team.applicationAccess.getAllByTeam(team.id)).map((a) => a.id)).toEqual([access.id]);
    await sdk.models.team.applicationAccess.remove(access.id);
    await sdk.models.team.membership.remove(membership.id);
    await expect(memberSdk.models.application.get(fleet.id, { $select: "id" })).rejects.toThrow();
  });
});
