import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantGlobalRole } from "../src/features/users/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { claimsOf, client, MINUTE, withClockOffset } from "./support/accounts.ts";
import { linkIn, type MailServer, type ReceivedMail, startMailServer } from "./support/mail.ts";

/**
 * Issue #34 "Support staff" (docs/support.md "Platform staff", "Staff mails"): platform
 * administrators grant and remove the global roles (spec 1 §3 "global roles platform administrator
 * and support_agent") through /admin/v1/users, audited, never leaving the platform without a
 * balena_admin; a change counts from the next request; every staff member gets one mail per new
 * ticket and per requester reply (real SMTP), linking to the ticket in the staff inbox; the staff
 * view of a ticket has every field of the form with the requester's values.
 */
let t: TestApp;
let mail: MailServer;
let api: ReturnType<typeof client>;
type Person = Awaited<ReturnType<TestApp["factories"]["user"]>>;
let root: Person;
let agent: Person;
let customer: Person;
let colleague: Person;
let unverifiedStaff: Person;
let org: { id: number };
let fieldsFile: string;

// biome-ignore lint/suspicious/noExplicitAny: the tests read answers of many shapes
type Loose = any;

const CUSTOM_FIELDS = [
  {
    id: 200,
    type: "tagger",
    title_in_portal: "Product area",
    required_in_portal: true,
    options: [
      { name: "Devices", value: "devices" },
      { name: "Billing", value: "billing" },
    ],
  },
  { id: 201, type: "integer", title_in_portal: "Devices affected", required_in_portal: false },
  { id: 202, type: "checkbox", title_in_portal: "Production down", required_in_portal: false },
  { id: 203, type: "text", title_in_portal: "Affected fleet or device", required_in_portal: false },
];

beforeAll(async () => {
  mail = await startMailServer();
  fieldsFile = path.join(fs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/flotilla-fields-`), "fields.json");
  fs.writeFileSync(fieldsFile, JSON.stringify(CUSTOM_FIELDS));
  t = await createTestApp({
    SMTP_URL: mail.url,
    FLOTILLA_PUBLIC_URL: "https://console.example.com",
    FLOTILLA_SUPPORT_TICKET_FIELDS: fieldsFile,
  });
  api = client(t);
  const person = (name: string) => t.factories.user({ email: `${name}@staff.example.com`, username: `staff_${name}` });
  root = await person("root");
  agent = await person("agent");
  customer = await person("customer");
  colleague = await person("colleague");
  unverifiedStaff = await person("unverified");
  await grantGlobalRole(t.db.orm, root.user.id, "balena_admin");
  await t.db.query('UPDATE "user" SET is_verified = false, must_be_verified = true WHERE id = $1', [
    unverifiedStaff.user.id,
  ]);
  org = await t.factories.organization({
    name: "Customer Co",
    plan: "production-v2",
    admins: [customer.user],
    members: [colleague.user],
  });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
  fs.rmSync(path.dirname(fieldsFile), { recursive: true, force: true });
});

const usersPage = async (token: string, query = "") => api.get(`/admin/v1/users${query}`, token);
const grant = (token: string, user: number, role: unknown) =>
  api.post(`/admin/v1/users/${user}/roles`, { role }, token);
const revoke = (token: string, user: number, role: string) => api.del(`/admin/v1/users/${user}/roles/${role}`, token);
/** A mail's text with the line ends it was written with (SMTP carries CRLF). */
const lf = (received: ReceivedMail) => ({ ...received, text: received.text.replaceAll("\r\n", "\n") });
const auditOf = async (user: number) =>
  (
    await t.db.query<{ action: string; actor_user: number | null; details: Loose; organization: number | null }>(
      `SELECT action, actor_user, details, organization FROM "audit_event"
        WHERE target_user = $1 AND action LIKE 'global_role.%' ORDER BY id`,
      [user],
    )
  ).rows;

describe("Admin → Users: who may", () => {
  it("answers platform administrators only: 403 for support agents, members and signed-out callers 401", async () => {
    await grantGlobalRole(t.db.orm, agent.user.id, "support_agent");
    for (const person of [agent, customer]) {
      const list = await usersPage(person.token);
      expect([list.status, list.json]).toEqual([
        403,
        { code: "forbidden", message: "Only platform administrators manage users and their global roles." },
      ]);
      expect((await grant(person.token, person.user.id, "balena_admin")).status).toBe(403);
      expect((await revoke(person.token, root.user.id, "balena_admin")).status).toBe(403);
    }
    expect((await api.get("/admin/v1/users")).status).toBe(401);
    expect(await auditOf(customer.user.id)).toEqual([]);
  });
});

describe("Admin → Users: the list", () => {
  it("searches usernames and emails, pages on the server, and shows global roles and the last sign-in", async () => {
    // A password sign-in is what the last sign-in shows.
    const login = await api.post("/login_", { username: customer.user.username, password: customer.password });
    expect(login.status).toBe(200);
    const page = await usersPage(root.token, "?search=STAFF.example&limit=2");
    expect(page.status).toBe(200);
    expect(page.json.total).toBe(5);
    expect((page.json.users as Loose[]).map((u) => u.username)).toEqual(["staff_agent", "staff_colleague"]);
    expect(page.json.role_counts).toEqual({ balena_admin: 1, support_agent: 1 });
    const next = await usersPage(root.token, "?search=staff.example&limit=2&offset=2");
    expect((next.json.users as Loose[]).map((u) => u.username)).toEqual(["staff_customer", "staff_root"]);
    const found = (next.json.users as Loose[])[0];
    expect(found).toMatchObject({ id: customer.user.id, email: "customer@staff.example.com", global_roles: [] });
    expect(Date.now() - Date.parse(found.last_sign_in_at)).toBeLessThan(60_000);
    expect((next.json.users as Loose[])[1]).toMatchObject({ global_roles: ["balena_admin"], last_sign_in_at: null });

    const byName = await usersPage(root.token, "?search=staff_ag");
    expect((byName.json.users as Loose[]).map((u) => u.global_roles)).toEqual([["support_agent"]]);
    const staff = await usersPage(root.token, "?role=any");
    expect((staff.json.users as Loose[]).map((u) => u.username)).toEqual(["staff_agent", "staff_root"]);
    // LIKE's wildcards are searched as text.
    expect((await usersPage(root.token, "?search=%25")).json.total).toBe(0);
    expect((await usersPage(root.token, "?search=_")).json.total).toBeGreaterThan(0);
  });

  it("answers a readable 400 for a bad query", async () => {
    for (const [query, message] of [
      ["?limit=0", "limit: must be a whole number from 1 to 100"],
      ["?limit=abc", "limit: must be a number"],
      ["?role=root", "role: must be support_agent, balena_admin or any"],
      ["?offset=-1", "offset: must be a whole number from 0 to 1000000"],
      // PostgreSQL cannot store a NUL: the client is told, it is no server failure.
      ["?search=a%00b", "Text cannot contain NUL characters (\\u0000)."],
    ]) {
      const answer = await usersPage(root.token, query);
      expect([answer.status, answer.json], query).toEqual([400, { code: "bad_request", message }]);
    }
  });
});

describe("Admin → Users: granting and removing", () => {
  it("grants support_agent, audited with the administrator as actor; a second grant changes nothing", async () => {
    const answer = await grant(root.token, colleague.user.id, "support_agent");
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      changed: true,
      role: "support_agent",
      user: { id: colleague.user.id, global_roles: ["support_agent"] },
    });
    const again = await grant(root.token, colleague.user.id, "support_agent");
    expect(again.json).toMatchObject({ changed: false });
    expect(await auditOf(colleague.user.id)).toEqual([
      {
        action: "global_role.granted",
        actor_user: root.user.id,
        organization: null,
        details: { role: "support_agent", username: "staff_colleague" },
      },
    ]);
    // The platform audit log shows it.
    const log = await api.get(`/audit/v1/entries?action=global_role.&target_id=${colleague.user.id}`, root.token);
    expect((log.json.entries as Loose[]).map((e) => e.action)).toEqual(["global_role.granted"]);
  });

  it("counts a change from the next request, with the token the user already holds", async () => {
    const before = colleague.token;
    expect(claimsOf(before).permissions).toEqual([]);
    // Granted above: the inbox opens with the old token.
    expect((await api.get("/support/v1/staff/tickets", before)).status).toBe(200);
    expect((await revoke(root.token, colleague.user.id, "support_agent")).json).toMatchObject({ changed: true });
    expect((await api.get("/support/v1/staff/tickets", before)).status).toBe(403);
    // The next refresh's token says so too (what the dashboard reads).
    const refreshed = await api.get("/user/v1/refresh-token", before);
    expect(claimsOf(refreshed.text).permissions).toEqual([]);
    await grant(root.token, colleague.user.id, "support_agent");
    expect(claimsOf((await api.get("/user/v1/refresh-token", before)).text).permissions).toEqual(["support.home"]);
    expect((await auditOf(colleague.user.id)).map((e) => e.action)).toEqual([
      "global_role.granted",
      "global_role.revoked",
      "global_role.granted",
    ]);
  });

  it("never removes the last platform administrator, and says so", async () => {
    const last = await revoke(root.token, root.user.id, "balena_admin");
    expect([last.status, last.json]).toEqual([
      409,
      {
        code: "last_platform_admin",
        message:
          "staff_root is the last platform administrator (balena_admin): make another user a platform administrator first, then remove this role.",
      },
    ]);
    // With a second administrator, one may step down.
    const second = await t.factories.user({ email: "second@staff.example.com", username: "staff_second" });
    expect((await grant(root.token, second.user.id, "balena_admin")).json.changed).toBe(true);
    const fresh = await t.ctx.tokens.start(second.user);
    expect((await revoke(fresh, second.user.id, "balena_admin")).json).toMatchObject({
      changed: true,
      user: { global_roles: [] },
    });
    // The one who stepped down is refused from then on.
    expect((await usersPage(fresh)).status).toBe(403);
    expect((await auditOf(second.user.id)).map((e) => [e.action, e.actor_user])).toEqual([
      ["global_role.granted", root.user.id],
      ["global_role.revoked", second.user.id],
    ]);
  });

  it("needs a recent sign-in of the administrator's own session, never an API key", async () => {
    const stale = await withClockOffset(-21 * MINUTE, () => t.ctx.tokens.start(root.user));
    const old = await grant(stale, customer.user.id, "support_agent");
    expect([old.status, old.json.code]).toEqual([403, "auth_expired"]);
    // Reading the list does not.
    expect((await usersPage(stale)).status).toBe(200);
    // Personal API keys are for users who administer an organization (shared/notes/spec-decisions.md 3).
    await t.factories.organization({ name: "Platform", admins: [root.user] });
    const key = await api.post("/api-key/user/full", { name: "automation", expiryDate: null }, root.token);
    expect([key.status, key.text]).toEqual([200, expect.any(String)]);
    const byKey = await grant(String(key.json ?? key.text).replaceAll('"', ""), customer.user.id, "support_agent");
    expect(byKey.status).toBe(403);
    expect(byKey.json.message).toContain("not with an API key");
    expect(await auditOf(customer.user.id)).toEqual([]);
  });

  it("answers readable errors for what a client can send", async () => {
    const cases: [() => ReturnType<typeof grant>, number, string][] = [
      [() => grant(root.token, customer.user.id, "root"), 400, "role: must be support_agent or balena_admin"],
      [() => grant(root.token, customer.user.id, undefined), 400, "role: must be support_agent or balena_admin"],
      [() => grant(root.token, customer.user.id, { name: "x" }), 400, "role: must be support_agent or balena_admin"],
      [() => grant(root.token, 999_999, "support_agent"), 404, "User not found"],
      [() => revoke(root.token, customer.user.id, "administrator"), 400, "role: must be support_agent or balena_admin"],
      [
        () => api.post("/admin/v1/users/abc/roles", { role: "support_agent" }, root.token),
        400,
        "invalid id passed in url",
      ],
      [
        () =>
          api.call("POST", `/admin/v1/users/${customer.user.id}/roles`, { token: root.token, body: "support_agent" }),
        400,
        'The body must be a JSON object such as {"role": "support_agent"}',
      ],
    ];
    for (const [send, status, message] of cases) {
      const answer = await send();
      expect([answer.status, answer.json?.message]).toEqual([status, message]);
    }
    const notJson = await fetch(`${t.url}/admin/v1/users/${customer.user.id}/roles`, {
      method: "POST",
      headers: { authorization: `Bearer ${root.token}`, "content-type": "application/json" },
      body: "{role:",
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.text()).not.toMatch(/object Object|Unexpected token|SyntaxError/);
  });
});

describe("staff mails and the staff view of a ticket", () => {
  let ticketId: number;
  const staffMails = (address: string, ticket: number) =>
    mail.to(address).filter((m: ReceivedMail) => m.subject.startsWith(`[Ticket #${ticket}]`));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));

  it("mails every staff member once about a new ticket, with every field and the inbox link", async () => {
    // colleague is a support agent (above), agent too, root a platform administrator.
    const answer = await api.post(
      `/zendesk/v1/${org.id}/submit-ticket`,
      {
        subject: "Devices reboot in a loop",
        comment: { body: "Since the update\nall devices reboot every minute." },
        custom_fields: [
          { id: 200, value: "devices" },
          { id: 201, value: "12" },
          { id: 202, value: false },
        ],
      },
      customer.token,
    );
    expect(answer.status).toBe(201);
    ticketId = (answer.json.ticket as Loose).id;
    for (const staff of ["agent", "root", "colleague"]) {
      const received = lf(await mail.next(`${staff}@staff.example.com`));
      expect(received.subject).toBe(`[Ticket #${ticketId}] New ticket from Customer Co: Devices reboot in a loop`);
      expect(linkIn(received)).toBe(`https://console.example.com/support?ticket=${ticketId}`);
      expect(received.text).toContain(
        `staff_customer (customer@staff.example.com) opened the ticket #${ticketId} "Devices reboot in a loop" for the organization Customer Co.`,
      );
      expect(received.text).toContain(
        "Priority: (not filled in)\nProduct area: Devices\nDevices affected: 12\nProduction down: No\nAffected fleet or device: (not filled in)",
      );
      expect(received.text).toContain("Since the update\nall devices reboot every minute.");
      expect(received.html).toContain(`href="https://console.example.com/support?ticket=${ticketId}"`);
    }
    await settle();
    for (const staff of ["agent", "root", "colleague"]) {
      expect(staffMails(`${staff}@staff.example.com`, ticketId)).toHaveLength(1);
    }
    // Not to staff whose address must be verified first, nor to the customer.
    await grantGlobalRole(t.db.orm, unverifiedStaff.user.id, "support_agent");
    expect(staffMails("unverified@staff.example.com", ticketId)).toHaveLength(0);
    expect(staffMails("customer@staff.example.com", ticketId)).toHaveLength(0);
    const { rows } = await t.db.query<{ staff_notified_at: Date | null }>(
      'SELECT staff_notified_at FROM "support_ticket" WHERE id = $1',
      [ticketId],
    );
    expect(rows[0]?.staff_notified_at).not.toBeNull();
  });

  it("refuses a NUL character in what the requester sends with a 400, not a server failure", async () => {
    for (const body of [
      { subject: "a\u0000b", comment: { body: "x" }, custom_fields: [{ id: 200, value: "devices" }] },
      {
        subject: "ab",
        comment: { body: "x" },
        custom_fields: [
          { id: 200, value: "devices" },
          { id: 203, value: "\u0000" },
        ],
      },
    ]) {
      const answer = await api.post(`/zendesk/v1/${org.id}/submit-ticket`, body, customer.token);
      expect([answer.status, answer.json]).toEqual([
        400,
        { code: "bad_request", message: "Text cannot contain NUL characters (\\u0000)." },
      ]);
    }
  });

  it("shows staff every field of the form, required ones included, with the requester's values", async () => {
    const staffView = await api.get(`/support/v1/staff/tickets/${ticketId}`, agent.token);
    expect(staffView.status).toBe(200);
    expect(staffView.json.form).toEqual([
      {
        id: 1,
        type: "subject",
        title: "Subject",
        required: true,
        value: "Devices reboot in a loop",
        display: "Devices reboot in a loop",
      },
      {
        id: 2,
        type: "description",
        title: "Description",
        required: true,
        value: "Since the update\nall devices reboot every minute.",
        display: "Since the update\nall devices reboot every minute.",
      },
      { id: 3, type: "priority", title: "Priority", required: false, value: null, display: null },
      { id: 200, type: "tagger", title: "Product area", required: true, value: "devices", display: "Devices" },
      { id: 201, type: "integer", title: "Devices affected", required: false, value: 12, display: "12" },
      { id: 202, type: "checkbox", title: "Production down", required: false, value: false, display: "No" },
      { id: 203, type: "text", title: "Affected fleet or device", required: false, value: null, display: null },
    ]);
    // The requester's own view is unchanged.
    const own = await api.get(`/support/v1/tickets/${ticketId}`, customer.token);
    expect(own.json.form).toBeUndefined();
  });

  it("mails staff once about each reply of the requester's side, never about staff replies", async () => {
    const staffReply = await api.post(
      `/support/v1/staff/tickets/${ticketId}/comments`,
      { body: "Which OS version do they run?" },
      agent.token,
    );
    expect(staffReply.status).toBe(201);
    const answer = await api.post(
      `/support/v1/tickets/${ticketId}/comments`,
      { body: "balenaOS 6.1.2 on all of them." },
      customer.token,
    );
    expect(answer.status).toBe(201);
    for (const staff of ["agent", "root", "colleague"]) {
      const received = lf(await mail.next(`${staff}@staff.example.com`));
      expect(received.subject).toBe(`[Ticket #${ticketId}] Devices reboot in a loop`);
      expect(received.text).toContain(
        `staff_customer replied to the ticket #${ticketId} "Devices reboot in a loop" of the organization Customer Co:`,
      );
      expect(received.text).toContain("balenaOS 6.1.2 on all of them.");
      expect(linkIn(received)).toBe(`https://console.example.com/support?ticket=${ticketId}`);
    }
    // Another reply: one more mail each.
    await api.post(`/support/v1/tickets/${ticketId}/comments`, { body: "Same here." }, customer.token);
    await settle();
    for (const staff of ["agent", "root", "colleague"]) {
      // The new ticket, two requester replies; the staff reply mailed none of them.
      expect(staffMails(`${staff}@staff.example.com`, ticketId)).toHaveLength(3);
    }
    expect(staffMails("customer@staff.example.com", ticketId)).toHaveLength(1);
  });
});
