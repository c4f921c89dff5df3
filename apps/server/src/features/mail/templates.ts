/**
 * The mails Flotilla sends, each as plain text and simple HTML. Links point at the dashboard
 * (FLOTILLA_PUBLIC_URL). Invitation templates are used by the invitations feature.
 */
export type MailContent = {
  subject: string;
  text: string;
  html: string;
  link: string;
  /** Files sent with it (an invoice's PDF); not kept in the outbox. */
  attachments?: Array<{ filename: string; content: Buffer; contentType: string }>;
};

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

export function compose(subject: string, paragraphs: string[], action: { label: string; link: string }): MailContent {
  const text = [...paragraphs, `${action.label}: ${action.link}`, "", "— Flotilla"].join("\n\n");
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">',
    ...paragraphs.map((p) => `<p style="white-space:pre-wrap">${escapeHtml(p)}</p>`),
    `<p><a href="${escapeHtml(action.link)}">${escapeHtml(action.label)}</a></p>`,
    `<p style="color:#666;font-size:12px">${escapeHtml(action.link)}</p>`,
    "</body></html>",
  ].join("\n");
  return { subject, text, html, link: action.link };
}

export function verificationMail(publicUrl: string, token: string, email: string, validHours: number): MailContent {
  const link = `${publicUrl}/user/verify-email/${token}/${encodeURIComponent(email)}`;
  return compose(
    "Verify your email address",
    [
      `Please confirm that ${email} is your email address.`,
      `The link is valid for ${validHours} hours. If you did not sign up, ignore this mail.`,
    ],
    { label: "Verify email", link },
  );
}

export function passwordResetMail(publicUrl: string, code: string, validMinutes: number): MailContent {
  const link = `${publicUrl}/user/reset-password/${code}`;
  return compose(
    "Reset your password",
    [
      "Somebody asked to reset the password of your account.",
      `The link is valid for ${validMinutes} minutes and works once. If it was not you, ignore this mail: your password stays as it is.`,
    ],
    { label: "Choose a new password", link },
  );
}

export function organizationInvitationMail(
  publicUrl: string,
  token: string,
  invite: { organization: string; inviter: string; message?: string | null },
): MailContent {
  return compose(
    `You are invited to the organization ${invite.organization}`,
    [
      `${invite.inviter} invited you to join the organization ${invite.organization} on Flotilla.`,
      ...(invite.message ? [invite.message] : []),
    ],
    { label: "Accept the invitation", link: `${publicUrl}/organization/invitation/${token}` },
  );
}

export function fleetInvitationMail(
  publicUrl: string,
  token: string,
  invite: { fleet: string; inviter: string; message?: string | null },
): MailContent {
  return compose(
    `You are invited to the fleet ${invite.fleet}`,
    [
      `${invite.inviter} invited you to the fleet ${invite.fleet} on Flotilla.`,
      ...(invite.message ? [invite.message] : []),
    ],
    { label: "Accept the invitation", link: `${publicUrl}/invitation/${token}` },
  );
}

/** A credit balance fell below its notification threshold (spec 3 §4 Credits). */
export function creditLowMail(
  publicUrl: string,
  organization: { id: number; name: string },
  credits: { balance: number; threshold: number },
): MailContent {
  const count = (n: number) => `${n.toLocaleString("en-US")} ${n === 1 ? "credit" : "credits"}`;
  return compose(
    "Your credit balance is low",
    [
      `The credit balance of the organization ${organization.name} is ${count(credits.balance)}, below its notification threshold of ${count(credits.threshold)}.`,
      "Devices beyond the plan are paid from the balance first; once it is spent they are charged to the payment method.",
    ],
    { label: "Add credits", link: `${publicUrl}/orgs/${organization.id}/credits` },
  );
}

/** Platform staff answered a support ticket (docs/support.md): to the requester and the addresses copied. */
export function supportReplyMail(
  publicUrl: string,
  ticket: { id: number; subject: string; status: string },
  reply: { author: string; body: string },
): MailContent {
  return compose(
    `[Ticket #${ticket.id}] ${ticket.subject}`,
    [
      `${reply.author} from support replied to the ticket #${ticket.id} "${ticket.subject}":`,
      reply.body,
      ticket.status === "solved"
        ? "The ticket is marked solved. Reply on the ticket to reopen it."
        : "Reply on the ticket to answer.",
    ],
    { label: "View the ticket", link: `${publicUrl}/support/tickets/${ticket.id}` },
  );
}

/** Where platform staff open a ticket: the support inbox with the ticket selected. */
export const staffTicketLink = (publicUrl: string, id: number) => `${publicUrl}/support?ticket=${id}`;

/** A field of the ticket form as the requester filled it (features/support/fields.ts `FilledField`). */
type MailedField = { title: string; type: string; display: string | null };

/**
 * A new support ticket, to every platform staff member (docs/support.md "Staff mails"): who opened
 * it for which organization, every field of the form with its value, and the inbox link.
 */
export function supportNewTicketStaffMail(
  publicUrl: string,
  ticket: { id: number; subject: string; organization: string; requester: string; requesterEmail: string },
  form: MailedField[],
  attachments: string[],
): MailContent {
  const fields = form
    .filter((field) => field.type !== "subject" && field.type !== "description")
    .map((field) => `${field.title}: ${field.display ?? "(not filled in)"}`);
  const description = form.find((field) => field.type === "description")?.display ?? "";
  return compose(
    `[Ticket #${ticket.id}] New ticket from ${ticket.organization}: ${ticket.subject}`,
    [
      `${ticket.requester} (${ticket.requesterEmail}) opened the ticket #${ticket.id} "${ticket.subject}" for the organization ${ticket.organization}.`,
      ...(fields.length > 0 ? [fields.join("\n")] : []),
      description,
      ...(attachments.length > 0 ? [`Attachments: ${attachments.join(", ")}`] : []),
    ],
    { label: "Open the ticket in the support inbox", link: staffTicketLink(publicUrl, ticket.id) },
  );
}

/** The requester's side answered a ticket, to every platform staff member (docs/support.md "Staff mails"). */
export function supportRequesterReplyStaffMail(
  publicUrl: string,
  ticket: { id: number; subject: string; organization: string },
  reply: { author: string; body: string; attachments: string[] },
): MailContent {
  return compose(
    `[Ticket #${ticket.id}] ${ticket.subject}`,
    [
      `${reply.author} replied to the ticket #${ticket.id} "${ticket.subject}" of the organization ${ticket.organization}:`,
      reply.body,
      ...(reply.attachments.length > 0 ? [`Attachments: ${reply.attachments.join(", ")}`] : []),
      "The ticket is open again, waiting for support.",
    ],
    { label: "Open the ticket in the support inbox", link: staffTicketLink(publicUrl, ticket.id) },
  );
}

export function webhookDisabledMail(
  publicUrl: string,
  organization: { id: number; name: string },
  webhook: { url: string },
  failures: number,
): MailContent {
  return compose(
    `A webhook of ${organization.name} was disabled`,
    [
      `Flotilla stopped delivering events to ${webhook.url} for ${organization.name}: its last ${failures} delivery attempts failed.`,
      "Events are no longer queued for it. Fix the receiver, then enable the webhook again; its delivery log shows each attempt's answer.",
    ],
    { label: "Open the organization's webhooks", link: `${publicUrl}/organizations/${organization.id}/webhooks` },
  );
}
