import { describe, expect, it } from "vitest";
import type { SupportAccess, TicketField } from "./api.ts";
import {
  attachmentTooLarge,
  ccAddresses,
  docsSearchHref,
  initialValues,
  supportErrorText,
  supportView,
  ticketBody,
  validateTicket,
} from "./model.ts";

const access = (over: Partial<SupportAccess> = {}): SupportAccess => ({
  can_access_support: true,
  support_tier: { title: "Standard", includes_private_support: true },
  is_administrator: false,
  email: { present: true, verified: true },
  ...over,
});

const apiError = (statusCode: number, apiCode?: string) => ({ statusCode, apiCode, body: "" });

describe("the drawer's private-support state (spec 3 §2, §4; spec 1 §8)", () => {
  it("waits for both answers", () => {
    expect(supportView({}, { data: access() }).kind).toBe("loading");
  });

  it("says no support access for a not-authorized answer, an unknown access error otherwise", () => {
    expect(supportView({ error: apiError(403, "forbidden") }, {}).kind).toBe("no_support_access");
    expect(supportView({ error: apiError(404, "not_found") }, {}).kind).toBe("no_support_access");
    expect(supportView({ error: apiError(500, "internal_error") }, {}).kind).toBe("unknown_access_error");
    expect(supportView({ error: new TypeError("Failed to fetch") }, {}).kind).toBe("unknown_access_error");
  });

  it("offers the upgrade when the plan has no private support, with the link for administrators", () => {
    expect(supportView({ data: false }, { data: access() })).toEqual({
      kind: "no_private_support",
      administrator: false,
    });
    expect(supportView({ data: false }, { data: access({ is_administrator: true }) })).toEqual({
      kind: "no_private_support",
      administrator: true,
    });
  });

  it("needs an e-mail, then a verified one", () => {
    expect(supportView({ data: true }, { data: access({ email: { present: false, verified: false } }) }).kind).toBe(
      "email_missing",
    );
    expect(supportView({ data: true }, { data: access({ email: { present: true, verified: false } }) }).kind).toBe(
      "email_unverified",
    );
    expect(supportView({ data: true }, { data: access() }).kind).toBe("ready");
  });
});

describe("docs search", () => {
  it("fills the template with the encoded query, nothing for a blank one", () => {
    expect(docsSearchHref("https://docs.example.com/search?q={query}", " wifi & ssh ")).toBe(
      "https://docs.example.com/search?q=wifi%20%26%20ssh",
    );
    expect(docsSearchHref("https://docs.example.com/search?q={query}", "  ")).toBeUndefined();
  });
});

const fields: TicketField[] = [
  { id: 1, type: "subject", title_in_portal: "Subject", required_in_portal: true },
  { id: 2, type: "description", title_in_portal: "Description", required_in_portal: true },
  {
    id: 3,
    type: "priority",
    title_in_portal: "Priority",
    required_in_portal: false,
    options: [
      { name: "Low", value: "low" },
      { name: "High", value: "high" },
    ],
  },
  { id: 100, type: "text", title_in_portal: "Affected fleet or device", required_in_portal: false },
  { id: 101, type: "integer", title_in_portal: "Devices affected", required_in_portal: false },
  {
    id: 102,
    type: "tagger",
    title_in_portal: "Area",
    required_in_portal: true,
    options: [{ name: "Networking", value: "networking" }],
  },
  { id: 103, type: "checkbox", title_in_portal: "Production", required_in_portal: false },
  { id: 104, type: "status", title_in_portal: "Status", required_in_portal: false },
];

describe("the ticket form (spec 3 §3, §5, §7)", () => {
  it("starts blank, normal priority, boxes unticked; fields it does not show are left out", () => {
    expect(initialValues(fields)).toEqual({ 1: "", 2: "", 3: "normal", 100: "", 101: "", 102: "", 103: false });
  });

  it("marks blank required fields in error with a blank message", () => {
    const errors = validateTicket(fields, initialValues(fields), "");
    expect(errors).toEqual({ 1: "", 2: "", 102: "" });
  });

  it("wants whole numbers and e-mail addresses in the cc field", () => {
    const values = { ...initialValues(fields), 1: "Wi-Fi", 2: "Drops", 102: "networking", 101: "2.5" };
    const errors = validateTicket(fields, values, "ops@example.com, not-an-address");
    expect(Object.keys(errors).sort()).toEqual(["101", "cc"]);
    expect(errors.cc).toContain("not-an-address");
    expect(errors[101]).not.toBe("");
    expect(validateTicket(fields, { ...values, 101: "3" }, "ops@example.com , ,b@example.org")).toEqual({});
  });

  it("sends the system fields by type and the others as custom_fields, with cc and uploads", () => {
    const values = {
      ...initialValues(fields),
      1: " Wi-Fi drops ",
      2: "Since Monday",
      3: "high",
      100: "demo-fleet",
      101: "3",
      102: "networking",
      103: true,
    };
    expect(ticketBody(fields, values, "a@example.com, b@example.org", ["t1", "t2"])).toEqual({
      subject: "Wi-Fi drops",
      comment: { body: "Since Monday", uploads: ["t1", "t2"] },
      priority: "high",
      email_ccs: [{ user_email: "a@example.com" }, { user_email: "b@example.org" }],
      custom_fields: [
        { id: 100, value: "demo-fleet" },
        { id: 101, value: 3 },
        { id: 102, value: "networking" },
        { id: 103, value: true },
      ],
    });
    expect(ccAddresses(" , a@example.com ,")).toEqual(["a@example.com"]);
  });

  it("refuses attachments over 5 MB before sending them", () => {
    expect(attachmentTooLarge({ size: 5 * 1024 * 1024 })).toBe(false);
    expect(attachmentTooLarge({ size: 5 * 1024 * 1024 + 1 })).toBe(true);
  });

  it("words failures in the spec's terms, never the server's raw text", () => {
    expect(supportErrorText(apiError(413, "support_attachment_exceed_limit"))).toBe(
      "Attachments must be at most 5 MB each.",
    );
    expect(supportErrorText(apiError(502, "something_went_wrong"))).toBe(
      "Something went wrong. Please try again later.",
    );
    expect(supportErrorText(new TypeError("Failed to fetch"))).toBe("Something went wrong. Please try again later.");
  });
});
