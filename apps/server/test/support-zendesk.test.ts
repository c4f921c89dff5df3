import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * The Zendesk adapter (docs/support.md "Zendesk") against a local stand-in for Zendesk's
 * Tickets API: it checks the documented request shapes (basic auth `{email}/token:{api_token}`,
 * POST /api/v2/uploads?filename= with the raw bytes, POST /api/v2/tickets with
 * `{ticket: {subject, comment: {body, uploads}, requester, email_ccs, custom_fields}}`,
 * GET /api/v2/ticket_fields) and answers Zendesk's documented response shapes. No network.
 */
type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer };
const seen: Seen[] = [];
let failTickets = false;
let zendesk: http.Server;
let t: TestApp;
let org: { id: number };
let token: string;

const EMAIL = "agent@acme.test";
const API_TOKEN = "zd-api-token-123";
const AUTH = `Basic ${Buffer.from(`${EMAIL}/token:${API_TOKEN}`).toString("base64")}`;

function answer(response: http.ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

beforeAll(async () => {
  zendesk = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      if (request.headers.authorization !== AUTH) return answer(response, 401, { error: "Couldn't authenticate you" });
      const url = new URL(request.url ?? "/", "http://zendesk");
      if (request.method === "GET" && url.pathname === "/api/v2/ticket_fields") {
        return answer(response, 200, {
          ticket_fields: [
            {
              id: 11,
              type: "subject",
              title: "Subject",
              title_in_portal: "Subject",
              required_in_portal: true,
              active: true,
              visible_in_portal: true,
              editable_in_portal: true,
            },
            {
              id: 12,
              type: "description",
              title: "Description",
              title_in_portal: "Description",
              required_in_portal: true,
              active: true,
              visible_in_portal: true,
              editable_in_portal: true,
            },
            {
              id: 13,
              type: "status",
              title: "Status",
              active: true,
              visible_in_portal: false,
              editable_in_portal: false,
            },
            {
              id: 14,
              type: "priority",
              title: "Priority",
              title_in_portal: "Priority",
              required_in_portal: false,
              active: true,
              visible_in_portal: true,
              editable_in_portal: true,
              system_field_options: [
                { name: "Low", value: "low" },
                { name: "Normal", value: "normal" },
                { name: "High", value: "high" },
                { name: "Urgent", value: "urgent" },
              ],
            },
            {
              id: 360001,
              type: "tagger",
              title: "Product area",
              title_in_portal: "Product area",
              required_in_portal: true,
              active: true,
              visible_in_portal: true,
              editable_in_portal: true,
              custom_field_options: [
                { id: 1, name: "Devices", value: "devices" },
                { id: 2, name: "Billing", value: "billing" },
              ],
            },
            {
              id: 360002,
              type: "text",
              title: "Internal note",
              active: false,
              visible_in_portal: true,
              editable_in_portal: true,
            },
          ],
          next_page: null,
          count: 6,
        });
      }
      if (request.method === "POST" && url.pathname === "/api/v2/uploads") {
        const filename = url.searchParams.get("filename") ?? "";
        return answer(response, 201, {
          upload: {
            token: `zd-upload-${filename}`,
            expires_at: "2030-01-01T00:00:00Z",
            attachment: {
              id: 501,
              file_name: filename,
              content_type: request.headers["content-type"],
              size: body.length,
            },
            attachments: [],
          },
        });
      }
      if (request.method === "POST" && url.pathname === "/api/v2/tickets") {
        if (failTickets)
          return answer(response, 422, { error: "RecordInvalid", description: "Record validation errors" });
        const ticket = JSON.parse(body.toString("utf8")).ticket;
        return answer(response, 201, { ticket: { id: 9001, status: "new", subject: ticket.subject } });
      }
      answer(response, 404, { error: "InvalidEndpoint" });
    });
  });
  await new Promise<void>((resolve) => zendesk.listen(0, "127.0.0.1", resolve));
  t = await createTestApp({
    ZENDESK_URL: `http://127.0.0.1:${(zendesk.address() as AddressInfo).port}`,
    ZENDESK_EMAIL: EMAIL,
    ZENDESK_API_TOKEN: API_TOKEN,
  });
  const member = await t.factories.user({ email: "requester@customer.test", username: "requester" });
  token = member.token;
  org = await t.factories.organization({ name: "Customer", plan: "pilot-v2", members: [member.user] });
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => zendesk?.close(resolve));
});

const post = (url: string, body: unknown) =>
  fetch(`${t.url}${url}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("the Zendesk adapter", () => {
  it("reads the ticket form from Zendesk: active fields the requester fills in, with their options", async () => {
    const response = await fetch(`${t.url}/zendesk/v1/${org.id}/ticket-fields`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const fields = (await response.json()) as { id: number; type: string; options?: { value: string }[] }[];
    expect(fields.map((field) => [field.id, field.type])).toEqual([
      [11, "subject"],
      [12, "description"],
      [14, "priority"],
      [360001, "tagger"],
    ]);
    expect(fields[3]).toEqual({
      id: 360001,
      type: "tagger",
      title_in_portal: "Product area",
      required_in_portal: true,
      options: [
        { name: "Devices", value: "devices" },
        { name: "Billing", value: "billing" },
      ],
    });
    const call = seen.find((each) => each.url === "/api/v2/ticket_fields");
    expect(call?.headers.authorization).toBe(AUTH);
  });

  it("uploads the file to Zendesk and submits the ticket there with its token, copies and fields", async () => {
    const form = new FormData();
    form.append("file", new Blob([new TextEncoder().encode("boot log\n")]), "boot log.txt");
    const uploaded = await fetch(`${t.url}/zendesk/v1/${org.id}/upload-attachment`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const { upload } = (await uploaded.json()) as { upload: { token: string } };
    const uploadCall = seen.find((each) => each.url.startsWith("/api/v2/uploads"));
    expect(uploadCall).toMatchObject({ method: "POST", url: "/api/v2/uploads?filename=boot%20log.txt" });
    expect(uploadCall?.headers["content-type"]).toBe("text/plain");
    expect(uploadCall?.headers.authorization).toBe(AUTH);
    expect(uploadCall?.body.toString()).toBe("boot log\n");
    // The token the dashboard holds is this server's, not Zendesk's.
    expect(upload.token).not.toContain("zd-upload");

    const submitted = await post(`/zendesk/v1/${org.id}/submit-ticket`, {
      subject: "Device will not boot",
      comment: { body: "It stops after the kernel.", uploads: [upload.token] },
      priority: "urgent",
      email_ccs: [{ user_email: "ops@customer.test" }],
      custom_fields: [{ id: 360001, value: "devices" }],
    });
    expect(submitted.status).toBe(201);
    const { ticket } = (await submitted.json()) as { ticket: { id: number; external_id: string } };
    expect(ticket.external_id).toBe("9001");
    const ticketCall = seen.find((each) => each.url === "/api/v2/tickets");
    expect(ticketCall?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(ticketCall?.body.toString() ?? "{}")).toEqual({
      ticket: {
        subject: "Device will not boot",
        comment: { body: "It stops after the kernel.", uploads: ["zd-upload-boot log.txt"] },
        requester: { name: "requester", email: "requester@customer.test" },
        priority: "urgent",
        email_ccs: [{ user_email: "ops@customer.test", action: "put" }],
        custom_fields: [{ id: 360001, value: "devices" }],
        external_id: `flotilla-${ticket.id}`,
        tags: ["flotilla", `flotilla_org_${org.id}`],
      },
    });
  });

  it("enforces Zendesk's required fields, and keeps nothing when Zendesk refuses the ticket", async () => {
    const missing = await post(`/zendesk/v1/${org.id}/submit-ticket`, { subject: "x", comment: { body: "y" } });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toBe("custom_fields: Product area is required");
    failTickets = true;
    try {
      const refused = await post(`/zendesk/v1/${org.id}/submit-ticket`, {
        subject: "Refused",
        comment: { body: "y" },
        custom_fields: [{ id: 360001, value: "billing" }],
      });
      expect(refused.status).toBe(502);
      expect(await refused.json()).toMatchObject({ code: "something_went_wrong" });
      const { rows } = await t.db.query('SELECT 1 FROM "support_ticket" WHERE subject = $1', ["Refused"]);
      expect(rows).toHaveLength(0);
    } finally {
      failTickets = false;
    }
  });

  it("leaves replies to Zendesk", async () => {
    const { rows } = await t.db.query<{ id: number }>('SELECT id FROM "support_ticket" LIMIT 1');
    const reply = await post(`/support/v1/tickets/${rows[0]?.id}/comments`, { body: "more" });
    expect(reply.status).toBe(409);
    expect(await reply.json()).toMatchObject({ code: "support_tickets_in_zendesk" });
  });
});
