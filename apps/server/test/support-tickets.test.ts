import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCustomFields, localTicketFields } from "../src/features/support/fields.ts";
import { attachmentType } from "../src/features/support/files.ts";
import { grantGlobalRole } from "../src/features/users/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { type MailServer, startMailServer } from "./support/mail.ts";

/**
 * Support tickets (spec 3 §2 Support drawer, §3, §4 "Support ticket", §5, §7, §8, §9;
 * SUP-006…SUP-027; docs/support.md): the access check, the ticket form's fields, attachments,
 * submitting, the requester's thread and the platform staff's inbox, on a real database and a
 * real SMTP server. No ticket or attachment of another organization is ever readable.
 */
let t: TestApp;
let mail: MailServer;
type Person = Awaited<ReturnType<TestApp["factories"]["user"]>>;
let admin: Person;
let member: Person;
let ccMember: Person;
let unverified: Person;
let outsider: Person;
let freeAdmin: Person;
let otherAdmin: Person;
let agent: Person;
let org: { id: number };
let freeOrg: { id: number };
let otherOrg: { id: number };

// biome-ignore lint/suspicious/noExplicitAny: the tests read answers of many shapes
type Loose = any;

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);

async function call(method: string, url: string, token: string, body?: unknown) {
  const response = await fetch(`${t.url}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, json: json as Loose, headers: response.headers };
}

async function upload(orgId: number, token: string, name: string, bytes: Buffer, type = "application/octet-stream") {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)], { type }), name);
  const response = await fetch(`${t.url}/zendesk/v1/${orgId}/upload-attachment`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: response.status, json: (await response.json()) as Loose };
}

beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ SMTP_URL: mail.url, FLOTILLA_PUBLIC_URL: "https://console.example.com" });
  const person = (name: string) => t.factories.user({ email: `${name}@support.example.com`, username: `sup_${name}` });
  admin = await person("admin");
  member = await person("member");
  ccMember = await person("cc");
  unverified = await person("unverified");
  outsider = await person("outsider");
  freeAdmin = await person("free");
  otherAdmin = await person("other");
  agent = await person("agent");
  await t.db.query('UPDATE "user" SET is_verified = false WHERE id = $1', [unverified.user.id]);
  await grantGlobalRole(t.db.orm, agent.user.id, "support_agent");
  // The session carries the global roles of its start.
  agent = { ...agent, token: await t.ctx.tokens.start(agent.user) };
  org = await t.factories.organization({
    name: "Paying",
    plan: "production-v2",
    admins: [admin.user],
    members: [member.user, ccMember.user, unverified.user],
  });
  freeOrg = await t.factories.organization({ name: "Gratis", admins: [freeAdmin.user] });
  otherOrg = await t.factories.organization({ name: "Other", plan: "pilot-v2", admins: [otherAdmin.user] });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

describe("support access (SUP-006, SUP-008)", () => {
  it("answers a boolean to every member, from the plan's support tier, and 404 to others", async () => {
    expect((await call("GET", `/billing/v1/account/${org.id}/can-access-support`, member.token)).json).toBe(true);
    expect((await call("GET", `/billing/v1/account/${org.id}/can-access-support`, admin.token)).json).toBe(true);
    const free = await call("GET", `/billing/v1/account/${freeOrg.id}/can-access-support`, freeAdmin.token);
    expect(free).toMatchObject({ status: 200, json: false });
    expect((await call("GET", `/billing/v1/account/${org.id}/can-access-support`, outsider.token)).status).toBe(404);
  });

  it("tells the drawer the tier, its SLA and the state of the user's email", async () => {
    const paid = await call("GET", `/support/v1/organizations/${org.id}/access`, member.token);
    expect(paid.json).toEqual({
      can_access_support: true,
      support_tier: {
        slug: "priority",
        title: "Priority",
        includes_private_support: true,
        includes__SLA: "First response within 1 business day",
      },
      is_administrator: false,
      email: { present: true, verified: true },
    });
    const free = await call("GET", `/support/v1/organizations/${freeOrg.id}/access`, freeAdmin.token);
    expect(free.json).toMatchObject({
      can_access_support: false,
      support_tier: { slug: "community", includes_private_support: false, includes__SLA: null },
      is_administrator: true,
    });
    const mine = await call("GET", `/support/v1/organizations/${org.id}/access`, unverified.token);
    expect(mine.json.email).toEqual({ present: true, verified: false });
    expect((await call("GET", `/support/v1/organizations/${org.id}/access`, outsider.token)).status).toBe(404);
  });
});

describe("the ticket form (SUP-014, SUP-015, SUP-024)", () => {
  it("lists the fields with title_in_portal, type, required_in_portal and options", async () => {
    const fields = await call("GET", `/zendesk/v1/${org.id}/ticket-fields`, member.token);
    expect(fields.status).toBe(200);
    expect(fields.json.map((field: { type: string }) => field.type)).toEqual([
      "subject",
      "description",
      "priority",
      "text",
    ]);
    expect(fields.json[0]).toEqual({ id: 1, type: "subject", title_in_portal: "Subject", required_in_portal: true });
    expect(fields.json[2].options.map((option: { value: string }) => option.value)).toEqual([
      "low",
      "normal",
      "high",
      "urgent",
    ]);
    expect(fields.json[3]).toMatchObject({ id: 100, title_in_portal: "Affected fleet or device" });
    expect((await call("GET", `/zendesk/v1/${org.id}/ticket-fields`, outsider.token)).status).toBe(404);
  });

  it("checks custom fields: known ids, values of their type, required ones present", () => {
    const fields = localTicketFields([
      {
        id: 200,
        type: "tagger",
        title_in_portal: "Product",
        required_in_portal: true,
        options: [{ name: "A", value: "a" }],
      },
      { id: 201, type: "integer", title_in_portal: "Devices affected", required_in_portal: false },
      { id: 202, type: "checkbox", title_in_portal: "Production down", required_in_portal: false },
    ]);
    expect(
      checkCustomFields(fields, [
        { id: 200, value: "a" },
        { id: 201, value: "12" },
      ]),
    ).toEqual([
      { id: 200, value: "a" },
      { id: 201, value: 12 },
    ]);
    expect(() => checkCustomFields(fields, [])).toThrow("custom_fields: Product is required");
    expect(() => checkCustomFields(fields, [{ id: 200, value: " " }])).toThrow("Product is required");
    expect(() => checkCustomFields(fields, [{ id: 200, value: "b" }])).toThrow("Product must be one of a");
    expect(() =>
      checkCustomFields(fields, [
        { id: 200, value: "a" },
        { id: 999, value: "x" },
      ]),
    ).toThrow("unknown field 999");
    expect(() =>
      checkCustomFields(fields, [
        { id: 200, value: "a" },
        { id: 202, value: "yes" },
      ]),
    ).toThrow("Production down must be true or false");
  });
});

describe("attachments (SUP-022, SUP-023)", () => {
  it("takes an allowed file and answers an upload token", async () => {
    const answer = await upload(org.id, member.token, "screen.png", PNG, "image/png");
    expect(answer.status).toBe(201);
    expect(answer.json.upload).toMatchObject({
      token: expect.stringMatching(/^[\w-]{20,}$/),
      attachment: { file_name: "screen.png", content_type: "image/png", size: PNG.length },
    });
    const { rows } = await t.db.query<{ stored_path: string }>(
      'SELECT stored_path FROM "support_attachment" WHERE id = $1',
      [answer.json.upload.attachment.id],
    );
    expect(rows[0]?.stored_path).toBe(`storage/support/${org.id}/${answer.json.upload.attachment.id}`);
    expect(fs.readFileSync(path.join(t.config.dataDir, rows[0]?.stored_path ?? "")).equals(PNG)).toBe(true);
  });

  it("refuses a file above 5 MB with errors.support_attachment_exceed_limit", async () => {
    const big = Buffer.alloc(5 * 1024 * 1024 + 1, 0x61);
    const answer = await upload(org.id, member.token, "huge.log", big, "text/plain");
    expect(answer).toMatchObject({
      status: 413,
      json: { code: "support_attachment_exceed_limit", message: "Attachments must be at most 5 MB each." },
    });
    // Exactly the limit is fine.
    expect((await upload(org.id, member.token, "edge.log", Buffer.alloc(5 * 1024 * 1024, 0x61))).status).toBe(201);
  });

  it("refuses types that are not allowed, and bytes that do not fit the extension", async () => {
    for (const [name, bytes] of [
      ["tool.exe", Buffer.from("MZ\x90\x00")],
      ["page.html", Buffer.from("<script>alert(1)</script>")],
      ["fake.png", Buffer.from("not a png at all")],
      ["binary.log", Buffer.from([0x00, 0x01, 0x02])],
    ] as const) {
      const answer = await upload(org.id, member.token, name, bytes);
      expect(answer.status, name).toBe(415);
      expect(answer.json.code).toBe("support_attachment_type_not_allowed");
    }
    expect(attachmentType("logs.tar.gz", Buffer.from([0x1f, 0x8b, 0x08]))).toBe("application/gzip");
    expect(attachmentType("report.pdf", Buffer.from("%PDF-1.7\n"))).toBe("application/pdf");
    expect(attachmentType("journal.txt", Buffer.from("héllo\n"))).toBe("text/plain; charset=utf-8");
  });

  it("lets only members with private support and a verified email upload (SUP-006, SUP-018)", async () => {
    expect((await upload(freeOrg.id, freeAdmin.token, "a.txt", Buffer.from("x"))).json.code).toBe("no_private_support");
    expect((await upload(org.id, unverified.token, "a.txt", Buffer.from("x"))).json.code).toBe(
      "support_email_unverified",
    );
    expect((await upload(org.id, outsider.token, "a.txt", Buffer.from("x"))).status).toBe(404);
  });
});

let ticketId: number;
let attachmentId: number;

describe("submitting a ticket (SUP-017…SUP-021, SUP-024…SUP-026)", () => {
  it("creates the ticket with copies, custom fields and the uploaded files", async () => {
    const file = await upload(org.id, member.token, "device.log", Buffer.from("kernel: oops\n"));
    attachmentId = file.json.upload.attachment.id;
    const answer = await call("POST", `/zendesk/v1/${org.id}/submit-ticket`, member.token, {
      subject: "Devices offline",
      comment: { body: "Since this morning all devices are offline.", uploads: [file.json.upload.token] },
      priority: "high",
      email_ccs: [{ user_email: "CC@support.example.com" }],
      cc: "boss@example.com, member@support.example.com",
      custom_fields: [{ id: 100, value: "fleet-a" }],
      organization: org.id,
    });
    expect(answer.status).toBe(201);
    expect(answer.json.ticket).toMatchObject({
      organization: { id: org.id, name: "Paying" },
      requester: { id: member.user.id, username: "sup_member" },
      subject: "Devices offline",
      status: "open",
      priority: "high",
    });
    ticketId = answer.json.ticket.id;
    const thread = await call("GET", `/support/v1/tickets/${ticketId}`, member.token);
    expect(thread.json).toMatchObject({
      description: "Since this morning all devices are offline.",
      custom_fields: [{ id: 100, value: "fleet-a" }],
      // Lowercase, without the requester's own address.
      email_ccs: ["cc@support.example.com", "boss@example.com"],
      attachments: [{ id: attachmentId, file_name: "device.log", href: `/support/v1/attachments/${attachmentId}` }],
      comments: [],
    });
  });

  it("refuses missing fields, bad addresses and upload tokens that are not the caller's", async () => {
    const submit = (token: string, body: unknown, orgId = org.id) =>
      call("POST", `/zendesk/v1/${orgId}/submit-ticket`, token, body);
    expect((await submit(member.token, { comment: { body: "x" } })).json.message).toBe('"subject" is required.');
    expect((await submit(member.token, { subject: "x" })).json.message).toBe("comment.body: is required");
    const badCc = await submit(member.token, { subject: "x", comment: { body: "y" }, cc: "not-an-address" });
    expect(badCc).toMatchObject({ status: 400, json: { code: "invalid_email" } });
    const adminFile = await upload(org.id, admin.token, "a.txt", Buffer.from("admin's"));
    const stolen = await submit(member.token, {
      subject: "x",
      comment: { body: "y", uploads: [adminFile.json.upload.token] },
    });
    expect(stolen.json.code).toBe("support_upload_invalid");
    // The refused ticket left nothing behind.
    const { rows } = await t.db.query('SELECT 1 FROM "support_ticket" WHERE subject = $1', ["x"]);
    expect(rows).toHaveLength(0);
    const eleven = Array.from({ length: 11 }, (_, i) => `token-${i}`);
    expect((await submit(member.token, { subject: "x", comment: { body: "y", uploads: eleven } })).status).toBe(400);
    expect((await submit(freeAdmin.token, { subject: "x", comment: { body: "y" } }, freeOrg.id)).json.code).toBe(
      "no_private_support",
    );
    expect((await submit(unverified.token, { subject: "x", comment: { body: "y" } })).json.code).toBe(
      "support_email_unverified",
    );
  });

  it("lets an administrator submit too", async () => {
    const answer = await call("POST", `/zendesk/v1/${org.id}/submit-ticket`, admin.token, {
      subject: "Invoice question",
      description: "Which address is on the invoice?",
    });
    expect(answer.status).toBe(201);
    expect(answer.json.ticket.priority).toBe("normal");
  });
});

describe("reading tickets", () => {
  it("shows a ticket to its requester, the members copied and the organization's administrators only", async () => {
    const mine = await call("GET", "/support/v1/tickets", member.token);
    expect(mine.json.map((ticket: { id: number }) => ticket.id)).toEqual([ticketId]);
    const adminList = await call("GET", `/support/v1/tickets?organization=${org.id}`, admin.token);
    expect(adminList.json.map((ticket: { subject: string }) => ticket.subject).sort()).toEqual([
      "Devices offline",
      "Invoice question",
    ]);
    expect((await call("GET", `/support/v1/tickets/${ticketId}`, ccMember.token)).status).toBe(200);
    expect((await call("GET", `/support/v1/tickets/${ticketId}`, admin.token)).status).toBe(200);
    for (const stranger of [otherAdmin, outsider, freeAdmin, unverified]) {
      const answer = await call("GET", `/support/v1/tickets/${ticketId}`, stranger.token);
      expect(answer).toMatchObject({ status: 404, json: { code: "support_ticket_not_found" } });
      expect((await call("GET", "/support/v1/tickets", stranger.token)).json).toEqual([]);
      expect((await call("GET", `/support/v1/attachments/${attachmentId}`, stranger.token)).status).toBe(404);
    }
    expect((await call("GET", `/support/v1/tickets/${ticketId}`, "not-a-token")).status).toBe(401);
  });

  it("downloads an attachment as a file for those who read its ticket", async () => {
    const response = await fetch(`${t.url}/support/v1/attachments/${attachmentId}`, {
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="device.log"/);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await response.text()).toBe("kernel: oops\n");
    expect((await fetch(`${t.url}/support/v1/attachments/${attachmentId}`)).status).toBe(401);
  });

  it("takes the requester's reply, and a member outside the ticket cannot reply", async () => {
    const reply = await call("POST", `/support/v1/tickets/${ticketId}/comments`, member.token, {
      body: "Also the dashboard is slow.",
    });
    expect(reply).toMatchObject({ status: 201, json: { body: "Also the dashboard is slow.", is_staff: false } });
    const other = await call("POST", `/support/v1/tickets/${ticketId}/comments`, otherAdmin.token, { body: "hi" });
    expect(other.status).toBe(404);
  });
});

describe("the platform staff's inbox", () => {
  it("is for support agents and platform administrators only", async () => {
    for (const person of [admin, member, outsider]) {
      expect((await call("GET", "/support/v1/staff/tickets", person.token)).status).toBe(403);
      expect((await call("GET", `/support/v1/staff/tickets/${ticketId}`, person.token)).status).toBe(403);
      expect(
        (await call("POST", `/support/v1/staff/tickets/${ticketId}/comments`, person.token, { body: "x" })).status,
      ).toBe(403);
    }
  });

  it("lists every organization's tickets, filtered by organization and status", async () => {
    await call("POST", `/zendesk/v1/${otherOrg.id}/submit-ticket`, otherAdmin.token, {
      subject: "Other org",
      comment: { body: "help" },
    });
    const all = await call("GET", "/support/v1/staff/tickets", agent.token);
    expect(all.json.map((ticket: { subject: string }) => ticket.subject)).toEqual(
      expect.arrayContaining(["Devices offline", "Invoice question", "Other org"]),
    );
    const mine = await call("GET", `/support/v1/staff/tickets?organization=${org.id}&status=open`, agent.token);
    expect(mine.json.map((ticket: { organization: { id: number } }) => ticket.organization.id)).toEqual([
      org.id,
      org.id,
    ]);
    expect(mine.json[0].requester_email).toMatch(/@support\.example\.com$/);
    expect((await call("GET", "/support/v1/staff/tickets?status=closed", agent.token)).status).toBe(400);
  });

  it("replies as staff, mails the requester and the copied addresses, and sets the status", async () => {
    const thread = await call("GET", `/support/v1/staff/tickets/${ticketId}`, agent.token);
    expect(thread.json.comments.map((comment: { body: string }) => comment.body)).toEqual([
      "Also the dashboard is slow.",
    ]);
    const reply = await call("POST", `/support/v1/staff/tickets/${ticketId}/comments`, agent.token, {
      body: "We are looking into it.",
    });
    expect(reply).toMatchObject({ status: 201, json: { is_staff: true, ticket: { status: "pending" } } });
    for (const address of ["member@support.example.com", "cc@support.example.com", "boss@example.com"]) {
      const received = await mail.next(address);
      expect(received.subject).toBe(`[Ticket #${ticketId}] Devices offline`);
      expect(received.text).toContain("We are looking into it.");
      expect(received.text).toContain(`https://console.example.com/support/tickets/${ticketId}`);
    }
    const seen = await call("GET", `/support/v1/tickets/${ticketId}`, member.token);
    expect(seen.json.status).toBe("pending");
    expect(seen.json.comments.at(-1)).toMatchObject({ is_staff: true, author: { username: "sup_agent" } });
    // The customer's answer puts it back to open.
    await call("POST", `/support/v1/tickets/${ticketId}/comments`, member.token, { body: "Thanks" });
    expect((await call("GET", `/support/v1/tickets/${ticketId}`, member.token)).json.status).toBe("open");
  });

  it("changes status and priority, and reads any attachment", async () => {
    const patched = await call("PATCH", `/support/v1/staff/tickets/${ticketId}`, agent.token, {
      status: "solved",
      priority: "urgent",
    });
    expect(patched.json).toMatchObject({ id: ticketId, status: "solved", priority: "urgent" });
    expect((await call("PATCH", `/support/v1/staff/tickets/${ticketId}`, agent.token, { status: "gone" })).status).toBe(
      400,
    );
    expect((await call("GET", `/support/v1/attachments/${attachmentId}`, agent.token)).status).toBe(200);
  });
});
