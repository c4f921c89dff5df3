/** Constants and limits named in the spec (spec 1 §9, spec 2 §9). One place, shared by server and dashboard. */

/** The version the dashboard identifies itself as (spec 1 §9). */
export const APP_VERSION = "31.1.1";

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 64;

/** A session token expires 36 h after issue and is refreshed hourly (spec 1 §9). */
export const SESSION_TOKEN_LIFETIME_MS = 36 * 60 * 60 * 1000;
export const SESSION_REFRESH_INTERVAL_MS = 60 * 60 * 1000;
/** Sensitive actions need an authTime younger than this (spec 1 §9). */
export const AUTH_FRESHNESS_MS = 1_200_000;

/** Dashboard request handling (spec 1 §7, §9). */
export const MAX_REQUESTS_IN_FLIGHT = 350;
export const PING_FIRST_DELAY_MS = 10_000;
export const PING_RETRY_STEP_MS = 200;
export const PING_RETRY_MAX_MULTIPLIER = 10;
export const PING_FAILURES_BEFORE_OFFLINE = 3;
export const CHUNK_LOAD_TIMEOUT_MS = 120_000;
export const BUILD_FRESHNESS_INTERVAL_MS = 600_000;
export const BOOTSTRAP_RETRY_MS = 10_000;
export const STATUS_PAGE_FIRST_CHECK_MS = 3000;
export const STATUS_PAGE_INTERVAL_MS = 60_000;
export const EXPERIMENT_FETCH_TIMEOUT_MS = 4000;
export const DEFAULT_POLL_INTERVAL_MS = 15_000;
export const POLL_GRACE_FACTOR = 0.33;
export const ERROR_MESSAGE_MAX_LENGTH = 500;

/** Date format of the whole product (spec 1 §9), date-fns tokens. */
export const DATE_FORMAT = "MMM do yyyy, h:mm a";

/** Organizations (spec 3 §5, §9). */
export const ORGANIZATION_LOGO_MAX_BYTES = 1_000_000;
export const ORGANIZATION_LOGO_TYPES = ["image/png", "image/jpeg"] as const;
/** Organization and fleet invitations stay valid this long (a Flotilla decision). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** The fleet role a membership gets when none is named (spec 2 §6). */
export const DEFAULT_FLEET_MEMBERSHIP_ROLE = "developer";

/** Device logs (spec 2 §9): lines kept per device by default (FLOTILLA_DEVICE_LOG_LINES), and a line's longest message. */
export const DEFAULT_DEVICE_LOG_LINES = 5000;
export const MAX_LOG_LINE_LENGTH = 10_000;

/**
 * Support tickets (spec 3 §3, §4 "Support ticket", §5, §9). An attachment is at most 5 MB
 * (errors.support_attachment_exceed_limit with limit 5), read as 5 MiB like release assets; a
 * ticket holds at most 10 attachments (a Flotilla decision).
 */
export const SUPPORT_ATTACHMENT_LIMIT_MB = 5;
export const SUPPORT_ATTACHMENT_MAX_BYTES = SUPPORT_ATTACHMENT_LIMIT_MB * 1024 * 1024;
export const SUPPORT_TICKET_MAX_ATTACHMENTS = 10;
export const SUPPORT_TICKET_MAX_CCS = 20;
export const SUPPORT_TICKET_STATUSES = ["open", "pending", "solved"] as const;
export type SupportTicketStatus = (typeof SUPPORT_TICKET_STATUSES)[number];
export const SUPPORT_TICKET_PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export type SupportTicketPriority = (typeof SUPPORT_TICKET_PRIORITIES)[number];
