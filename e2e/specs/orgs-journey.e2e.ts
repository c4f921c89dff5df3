import { mkdirSync } from "node:fs";
import zlib from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { startMailServer } from "../support/mail.ts";
import { logIn } from "./accounts-helpers.ts";
import { DEMO, submittedTo } from "./web-helpers.ts";

/** Screenshots of the organization pages for people to look at (outside the repository). */
async function shot(page: Page, name: string) {
  mkdirSync("/tmp/shots-orgs", { recursive: true });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shots-orgs/${name}.png`, fullPage: true });
}

/** A small valid PNG (a 16×16 square of one colour). */
function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buffer: Buffer) => {
    let c = 0xffffffff;
    for (const byte of buffer) c = (crcTable[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const size = 16;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8;
  header[9] = 2;
  const rows = Buffer.concat(
    Array.from({ length: size }, () => Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3, 0)]).fill(0x3a, 1)),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * Issue 5 "Done when", as people would do it: the demo administrator creates an organization,
 * uploads a logo and invites a member by email; the invitee signs up through the mailed link and
 * lands in /orgs; a team gets a fleet with the observer role; the member sees it read-only; the
 * administrator's changes show after a reload; the last-admin rules hold; the member leaves.
 */
describe("organizations: an administrator and an invited member", () => {
  let mail: Awaited<ReturnType<typeof startMailServer>>;
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let adminContext: BrowserContext;
  let memberContext: BrowserContext;
  let admin: Page;
  let member: Page;
  const invitee = `bo.${Date.now()}@example.com`;
  const orgName = `Acme ${Date.now() % 100000}`;
  let orgPath = "";
  let fleetId = 0;
  let memberUsername = "";
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;

  beforeAll(async () => {
    mail = await startMailServer();
    flotilla = await startFlotilla({ SMTP_URL: mail.url, FLOTILLA_EMAIL_VERIFICATION: "optional" });
    browser = await launchBrowser();
    const consent = () => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials"));
    adminContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await adminContext.addInitScript(consent);
    memberContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await memberContext.addInitScript(consent);
    admin = await adminContext.newPage();
    member = await memberContext.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    await mail?.stop();
  });

  /** A data API call with the page's own session token. */
  async function api<T>(page: Page, method: string, path: string, body?: unknown): Promise<T> {
    return page.evaluate(
      async ({ apiUrl, method, path, body }) => {
        const token = localStorage.getItem("balena-token");
        const response = await fetch(`${apiUrl}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        if (!response.ok) throw new Error(`${response.status} ${text}`);
        return text ? JSON.parse(text) : undefined;
      },
      { apiUrl: flotilla.apiUrl, method, path, body },
    ) as Promise<T>;
  }

  it("creates an organization from /orgs; a blank name is refused", async () => {
    await logIn(admin, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await admin.waitForURL(/\/fleets$/);
    await admin.goto(url("/orgs"));
    await admin.getByRole("table", { name: "Organizations" }).getByRole("link", { name: "Demo" }).waitFor();
    await admin.getByRole("button", { name: "Create", exact: true }).click();
    const dialog = admin.getByRole("dialog", { name: "Create organization" });
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByText("A name is required").waitFor();
    await dialog.getByLabel("Name").fill("demo");
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog
      .getByText("This name is already used by another organization. Note that the name is case-insensitive")
      .waitFor();
    // A logo may go along (spec 3 §7): a GIF is refused at once, a PNG is sent as a data URL.
    await dialog
      .getByLabel("Logo file")
      .setInputFiles({ name: "a.gif", mimeType: "image/gif", buffer: Buffer.from("GIF89a") });
    await dialog.getByRole("alert").getByText("The logo must be a PNG or JPEG image").waitFor();
    await dialog.getByLabel("Logo file").setInputFiles({ name: "acme.png", mimeType: "image/png", buffer: png() });
    await dialog.getByText("acme.png").waitFor();
    await dialog.getByRole("img", { name: "Chosen logo" }).waitFor();
    await dialog.getByLabel("Name").fill(orgName);
    await shot(admin, "01a-create-with-logo");
    const sent = admin.waitForRequest(
      (request) => request.method() === "POST" && request.url().endsWith("/v7/organization"),
    );
    await dialog.getByRole("button", { name: "Create" }).click();
    const body = (await sent).postDataJSON() as { name: string; logo_image: string };
    expect(body.name).toBe(orgName);
    expect(body.logo_image).toMatch(/^data:image\/png;name=acme\.png;base64,iVBORw0KGgo/);
    await admin.getByText("Organization created").waitFor();
    await admin
      .getByRole("table", { name: "Organizations" })
      .getByRole("img", { name: `${orgName} logo` })
      .waitFor();
    await shot(admin, "01-orgs-list");
    await admin.getByRole("link", { name: orgName }).click();
    await admin.waitForURL(/\/orgs\/\d+$/);
    orgPath = new URL(admin.url()).pathname;
    await admin.getByRole("heading", { name: orgName }).waitFor();
    // The sole administrator may delete, not leave (spec 3 §6).
    await admin.getByRole("button", { name: "Delete organization" }).waitFor();
    expect(await admin.getByRole("button", { name: "Leave organization" }).count()).toBe(0);
    const menu = admin.getByRole("navigation", { name: "Main navigation" });
    for (const entry of ["Summary", "Fleets", "Blocks", "Members", "Teams"])
      await menu.getByRole("link", { name: entry }).waitFor();
  });

  it("uploads a PNG logo; other files are refused with the spec's error", async () => {
    const input = admin.getByTestId("logo-input");
    await input.setInputFiles({ name: "logo.gif", mimeType: "image/gif", buffer: Buffer.from("GIF89a") });
    await admin.getByRole("alert").getByText("The logo must be a PNG or JPEG image").waitFor();
    await input.setInputFiles({ name: "big.png", mimeType: "image/png", buffer: Buffer.alloc(1_000_001) });
    await admin.getByRole("alert").getByText("The logo must be at most 1,000,000 bytes").waitFor();
    await input.setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: png() });
    await admin.getByText("Updated organization logo").waitFor();
    await admin.getByRole("img", { name: `${orgName} logo` }).waitFor();
    await shot(admin, "02-org-summary");
  });

  it("invites a member by email with a role and a message", async () => {
    await admin.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Members" }).click();
    await admin.waitForURL(url(`${orgPath}/members`));
    await admin.getByRole("button", { name: "Invite member" }).click();
    const dialog = admin.getByRole("dialog", { name: "Invite member" });
    await dialog.getByLabel("Email address").fill("not-an-email");
    await dialog.getByRole("button", { name: "Send invitation" }).click();
    await dialog.getByText("Invalid email address").waitFor();
    await dialog.getByLabel("Email address").fill(`  ${invitee}  `);
    await dialog.getByLabel("Message (optional)").fill("Welcome aboard");
    await dialog.getByRole("button", { name: "Send invitation" }).click();
    await admin.getByText("User added").waitFor();
    const pending = admin.getByRole("table", { name: "Pending invitations" });
    await pending.getByText(invitee).waitFor();
    await pending.getByText("Welcome aboard").waitFor();
    // Inviting the same address again is refused by the server.
    await admin.getByRole("button", { name: "Invite member" }).click();
    await dialog.getByLabel("Email address").fill(invitee);
    await dialog.getByRole("button", { name: "Send invitation" }).click();
    await dialog.getByText("This user has already been invited").waitFor();
    // A member is refused by the form (spec 3 §5; the API itself would invite them, as balena's does).
    await dialog.getByLabel("Email address").fill(DEMO.email.toUpperCase());
    await dialog.getByRole("button", { name: "Send invitation" }).click();
    await dialog.getByText("This user is already a member").waitFor();
    expect(await pending.getByText(DEMO.email, { exact: false }).count()).toBe(0);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    // The last administrator can be neither demoted nor removed.
    const members = admin.getByRole("table", { name: "Members" });
    expect(await members.getByRole("combobox").first().getAttribute("aria-disabled")).toBe("true");
    await shot(admin, "03-members");
  });

  it("the invitee signs up through the mailed link and lands in /orgs with access", async () => {
    const link = await mail.waitForLink(invitee, /https?:\/\/[^\s"<>]+\/organization\/invitation\/[^\s"<>]+/);
    await member.goto(link);
    await member.waitForURL(/\/login\?redirect=/);
    await member.getByRole("link", { name: "Create an account" }).click();
    await member.waitForURL(/\/signup\?redirect=/);
    await member.getByLabel("Email", { exact: true }).fill(invitee);
    await member.getByLabel("Password", { exact: true }).fill("member-password-1");
    await member.getByRole("button", { name: "Create account" }).click();
    await submittedTo(member, /\/signup\/profile$/);
    await member.getByLabel("First name").fill("Bo");
    await member.getByLabel("Last name").fill("Ng");
    await member.getByLabel("Company", { exact: true }).fill("Harbour Labs");
    await member.getByRole("radio", { name: /Personal/ }).check();
    await member.getByRole("button", { name: "Save and continue" }).click();
    await member.waitForURL(url("/orgs"));
    await member.getByRole("link", { name: orgName }).waitFor();
    const whoami = await api<{ username: string }>(member, "GET", "/actor/v1/whoami");
    memberUsername = whoami.username;
    // Only organizations the user administers can be chosen for deletion (spec 1 §6.2).
    expect(await member.getByRole("checkbox", { name: `Select ${orgName}` }).count()).toBe(0);
    await member.getByRole("button", { name: "Create", exact: true }).waitFor();
    // Without the personal organization the member administers none: no Create (docs/decisions.md).
    await member.getByRole("checkbox", { name: `Select ${memberUsername}` }).check();
    await member.getByRole("button", { name: "Delete", exact: true }).click();
    await member.getByRole("dialog").getByRole("button", { name: "Delete", exact: true }).click();
    await member.getByText("Organization deleted successfully").waitFor();
    await member.getByRole("link", { name: memberUsername }).waitFor({ state: "detached" });
    expect(await member.getByRole("button", { name: "Create", exact: true }).count()).toBe(0);
    expect(await member.getByRole("button", { name: "Delete", exact: true }).count()).toBe(0);
    const refused = await member.evaluate(
      async ({ apiUrl }) =>
        (
          await fetch(`${apiUrl}/v7/organization`, {
            method: "POST",
            headers: {
              Authorization: `Bearer ${localStorage.getItem("balena-token")}`,
              "Content-Type": "application/json",
            },
            body: JSON.stringify({ name: "Mine" }),
          })
        ).status,
      { apiUrl: flotilla.apiUrl },
    );
    expect(refused).toBe(403);
    await shot(member, "03b-member-orgs-read-only");
    await member.getByRole("link", { name: orgName }).click();
    await member.getByRole("heading", { name: orgName }).waitFor();
    // A member leaves rather than deletes, and edits nothing.
    await member.getByRole("button", { name: "Leave organization" }).waitFor();
    expect(await member.getByRole("button", { name: "Delete organization" }).count()).toBe(0);
    expect(await member.getByRole("button", { name: "Rename" }).count()).toBe(0);
    expect(await member.getByRole("button", { name: "Upload logo" }).count()).toBe(0);
    await shot(member, "04-member-org-summary");
  });

  it("creates a team, adds the member, and grants it a fleet with the observer role", async () => {
    const orgId = Number(orgPath.split("/").pop());
    const [deviceType] = (await api<{ d: Array<{ id: number }> }>(admin, "GET", "/v7/device_type?$select=id&$top=1")).d;
    const fleet = await api<{ id: number }>(admin, "POST", "/v7/application", {
      app_name: "field-sensors",
      organization: orgId,
      is_for__device_type: deviceType?.id,
    });
    fleetId = fleet.id;

    await admin.goto(url(`${orgPath}/teams`));
    await admin.getByRole("button", { name: "Create team" }).click();
    const create = admin.getByRole("dialog", { name: "Create team" });
    await create.getByLabel("Team name").fill("Field crew");
    await create.getByRole("button", { name: "Create" }).click();
    await admin.getByText("Team added successfully").waitFor();
    await admin.getByRole("link", { name: "Field crew" }).click();
    await admin.getByRole("heading", { name: "Field crew" }).waitFor();

    await admin.getByRole("button", { name: "Add members" }).click();
    const add = admin.getByRole("dialog", { name: "Add members to Field crew" });
    await add.getByRole("combobox", { name: "Members" }).click();
    await admin.getByRole("option", { name: memberUsername }).click();
    await admin.keyboard.press("Escape");
    await add.getByRole("button", { name: "Add" }).click();
    await admin.getByText("Member added successfully").waitFor();

    await admin.getByRole("button", { name: "Grant access" }).click();
    const grant = admin.getByRole("dialog", { name: "Grant Field crew access" });
    await grant.getByRole("combobox", { name: "Fleets" }).click();
    await admin.getByRole("option", { name: "field-sensors" }).click();
    await admin.keyboard.press("Escape");
    // The chosen fleets are listed in a box 300 px high (spec 2 §9), each removable.
    const chosen = grant.getByRole("list", { name: "Selected fleets" });
    await chosen.getByText("field-sensors").waitFor();
    expect(Math.round((await chosen.boundingBox())?.height ?? 0)).toBe(300);
    await grant.getByRole("combobox", { name: "Fleets" }).getByText("1 selected").waitFor();
    await shot(admin, "05a-grant-selected");
    await grant.getByRole("combobox", { name: "Role" }).click();
    // Prices per member; paid-only roles are greyed out on the free plan.
    await admin.getByRole("option", { name: /Observer\s*Free/ }).waitFor();
    expect(await admin.getByRole("option", { name: /^Operator/ }).getAttribute("aria-disabled")).toBe("true");
    await admin.getByRole("option", { name: /^Operator/ }).hover();
    await admin.getByText("access role only available for paid users").waitFor();
    await shot(admin, "05-role-picker");
    await admin.getByRole("option", { name: /Observer/ }).click();
    await grant.getByRole("button", { name: "Grant access" }).click();
    await admin.getByText("Resource added to team").waitFor();
    await admin.getByRole("table", { name: "Team access" }).getByRole("link", { name: "field-sensors" }).waitFor();
    await shot(admin, "06-team");
  });

  it("the member sees the fleet read-only: no settings entry, no edit buttons", async () => {
    await member.goto(url(`/fleets/${fleetId}`));
    await member.getByRole("heading", { name: "field-sensors" }).waitFor();
    await member.getByTestId("fleet-role").getByText("Observer").waitFor();
    const menu = member.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Members" }).waitFor();
    expect(await menu.getByRole("link", { name: "Settings" }).count()).toBe(0);
    await shot(member, "07-fleet-observer");
    await menu.getByRole("link", { name: "Members" }).click();
    await member.getByText("You can see who has access, but you are not authorised to edit members.").waitFor();
    expect(await member.getByRole("button", { name: "Add member" }).count()).toBe(0);
    await menu.getByRole("link", { name: "Teams" }).click();
    await member.getByRole("table", { name: "Teams" }).getByText("Field crew").waitFor();
    expect(await member.getByRole("button", { name: "Add to team" }).count()).toBe(0);
    await shot(member, "08-fleet-teams-observer");
    // Settings need application.update: an observer who types the address is sent home.
    await member.goto(url(`/fleets/${fleetId}/settings`));
    await member.waitForURL(url("/fleets"));
  });

  it("the administrator changes the member's roles; the member's view changes after a reload", async () => {
    const access = admin.getByRole("table", { name: "Team access" });
    await access.getByRole("combobox", { name: "Role of field-sensors" }).click();
    await admin.getByRole("option", { name: /^Developer/ }).click();
    await admin.getByText("Role changed").waitFor();

    await member.goto(url(`/fleets/${fleetId}`));
    await member.getByTestId("fleet-role").getByText("Developer").waitFor();
    await member.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Settings" }).waitFor();

    // Organization role: member → administrator; the member now manages members.
    await admin.goto(url(`${orgPath}/members`));
    const members = admin.getByRole("table", { name: "Members" });
    await members.getByRole("combobox", { name: `Role of ${memberUsername}` }).click();
    // Each option says what one more member at it costs (ORG-092): "Administrator $49 per member…".
    await admin.getByRole("option", { name: /^Administrator/ }).click();
    await admin.getByText("Role changed").waitFor();
    await member.goto(url(`${orgPath}/members`));
    await member.getByRole("button", { name: "Invite member" }).waitFor();
    // Two administrators: neither is the sole one, both may leave, nobody may delete.
    await member.goto(url(orgPath));
    await member.getByRole("button", { name: "Leave organization" }).waitFor();
    expect(await member.getByRole("button", { name: "Delete organization" }).count()).toBe(0);
    await shot(member, "09-member-promoted");
    const retention = member.getByRole("region", { name: "Log retention" });
    const days = retention.getByLabel("Keep lines for (days)");
    await days.waitFor();
    // The earlier "Role changed" toast may still show on a slow machine: wait it out, so the next
    // one is this change's.
    await admin.getByText("Role changed").waitFor({ state: "hidden", timeout: 15_000 });
    await members.getByRole("combobox", { name: `Role of ${memberUsername}` }).click();
    await admin.getByRole("option", { name: /^Member/ }).click();
    await admin.getByText("Role changed").waitFor();

    // The page the member still has open offers the change; the server refuses it, the error says
    // why and the field goes back to its stored value (spec 2 §8: a failed form change reverts).
    await days.fill("3");
    await retention.getByRole("button", { name: "Save" }).click();
    await retention.getByText("Only the organization's administrators can change its log retention.").waitFor();
    expect(await days.inputValue()).toBe("");
    await shot(member, "09b-failed-change-reverted");
  });

  it("the last-admin rules hold; the member leaves", async () => {
    await admin.goto(url(orgPath));
    await admin.getByRole("button", { name: "Delete organization" }).waitFor();
    expect(await admin.getByRole("button", { name: "Leave organization" }).count()).toBe(0);

    await member.goto(url(orgPath));
    await member.getByRole("button", { name: "Leave organization" }).click();
    await member.getByRole("dialog").getByRole("button", { name: "Leave organization" }).click();
    await member.waitForURL(url("/orgs"));
    await member.getByText("You left the organization").waitFor();
    expect(await member.getByRole("link", { name: orgName }).count()).toBe(0);
    await shot(member, "10-member-left");

    await admin.goto(url(`${orgPath}/members`));
    await admin.getByRole("table", { name: "Members" }).getByRole("link").first().waitFor();
    expect(
      await admin.getByRole("table", { name: "Members" }).getByRole("link", { name: memberUsername }).count(),
    ).toBe(0);
  });
});
