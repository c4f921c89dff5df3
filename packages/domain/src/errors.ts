/**
 * The error catalogue: every error the API sends carries one of these codes, and the
 * dashboard translates the code (i18n key `errors.<code>`). Texts are the spec's.
 *
 * `balenaWords`: the API answers these in balena's own words (a duplicate name says "unique", a
 * data rule keeps pinejs's "It is necessary that each …"), as balena's clients match on them; the
 * throw site gives those words and the spec's `params`, which travel in ERROR_PARAMS_HEADER, so
 * the dashboard shows `text` with them instead (apps/web lib/errors.ts).
 */
export const errorCatalogue = {
  bad_request: { status: 400, text: "Invalid request." },
  invalid_parameter: {
    status: 400,
    text: "Invalid parameter: {suppliedValue} is not valid for {parameterName}.",
  },
  not_logged_in: { status: 401, text: "You have to log in." },
  session_expired: { status: 401, text: "Your session has expired." },
  token_expired: { status: 401, text: "Your authentication token has expired." },
  malformed_token: { status: 401, text: "Malformed token." },
  invalid_login_credentials: { status: 401, text: "Invalid login credentials." },
  unauthorized: { status: 401, text: "Unauthorized." },
  forbidden: { status: 403, text: "You are not allowed to do this." },
  not_found: { status: 404, text: "Resource not found" },
  conflict: { status: 409, text: "Resource already exists." },
  payload_too_large: { status: 413, text: "Request body is too large." },
  unsupported_media_type: { status: 415, text: "Unsupported content type." },
  too_many_requests: { status: 429, text: "Too Many Requests. Try again later." },
  // Accounts (spec 1 §4, §8).
  invalid_password: { status: 401, text: "The password is not correct." },
  auth_expired: {
    status: 403,
    text: "Authentication expired: this action needs a recent sign-in, enter your password again.",
  },
  two_factor_required: {
    status: 401,
    text: "Two-factor authentication is required: enter your authenticator code or a recovery code.",
  },
  two_factor_code_required: { status: 400, text: "code required" },
  two_factor_code_invalid: { status: 400, text: "code invalid" },
  reset_code_expired: { status: 400, text: "reset code expired" },
  reset_code_invalid: { status: 400, text: "reset code invalid" },
  email_verification_invalid: { status: 400, text: "email verification link invalid or expired" },
  account_deletion_blocked: {
    status: 400,
    text: "This account cannot be deleted while an organization it administers has a custom billing plan. Please contact support.",
  },
  // Organizations, teams, members and invitations (spec 3 §5, §8; spec 1 §8; spec 2 §6).
  already_used: {
    status: 409,
    text: "This name is already used by another {type}. Note that the name is case-insensitive",
    balenaWords: true,
  },
  // A fleet, app or block name (spec 2 §5 "Fleet name"): `problem` is the spec's text of it.
  fleet_name_invalid: { status: 400, text: "{problem}", balenaWords: true },
  name_required: { status: 400, text: "A name is required" },
  invitee_required: { status: 400, text: "An invitee is required" },
  invalid_email: { status: 400, text: "Invalid email address" },
  invitee_already_exist: { status: 409, text: "This user is already a member" },
  invitee_already_invited: { status: 409, text: "This user has already been invited" },
  invitation_invalid: { status: 400, text: "Invitation invalid or expired" },
  cannot_delete_last_organization_admin: {
    status: 400,
    text: "The last administrator of an organization cannot be removed, demoted or leave it",
  },
  organization_delete_not_sole_admin: {
    status: 403,
    text: "Only the sole administrator of an organization can delete it; other members leave it",
  },
  organization_create_not_admin: {
    status: 403,
    text: "Only an administrator of an organization or a platform administrator can create an organization",
  },
  user_not_found: { status: 400, text: "User not found: {username}" },
  organization_membership_required: {
    status: 400,
    text: "It is necessary that each user (Auth) that is member of an application that has an organization, is member of the organization",
  },
  paid_only_role: { status: 400, text: "access role only available for paid users" },
  operator_role_fleets_only: { status: 400, text: "Operator roles are only available for fleets" },
  limited_roles_not_in_plan: {
    status: 400,
    text: "Limited roles (safe-developer, safe-operator) are a preview add-on the organization's plan does not include",
  },
  logo_invalid: { status: 400, text: "The logo must be a PNG or JPEG image" },
  logo_too_large: { status: 413, text: "The logo must be at most 1,000,000 bytes" },
  // Enterprise sign-in (spec 1 §8; spec 3 §5, §8).
  saml_login_failed: { status: 401, text: "Single sign-on failed. Please try again or contact your administrator." },
  saml_account_mismatch: {
    status: 403,
    text: "This single sign-on account is linked to another user. Log out and sign in through single sign-on again.",
  },
  saml_require_login: {
    status: 401,
    text: "An account with this email already exists. Log in to it first, then sign in through single sign-on again to link them.",
  },
  saml_email_mismatch: {
    status: 403,
    text: "The identity provider's email does not match the email of the account you are logged in to.",
  },
  unknown_sso_identifier: { status: 404, text: "Unknown SSO identifier: {ssoIdentifier}" },
  saml_provider_not_in_plan: {
    status: 402,
    text: "Single sign-on with {ssoIdentifier} is not available: none of its organizations has SAML in its plan any more. Ask an administrator of your organization.",
  },
  saml_domain_not_verified: {
    status: 403,
    text: "This identity provider may not sign in addresses at {domain}: its organization has not verified that domain.",
  },
  saml_not_in_plan: { status: 402, text: "Single sign-on (SAML) is not included in the plan of {organization}." },
  invalid_certificate_format: { status: 400, text: "Invalid certificate format" },
  idp_must_have_at_least_one_org: { status: 400, text: "An identity provider must have at least one organization" },
  idp_has_saml_accounts: {
    status: 409,
    text: "This identity provider still has SAML accounts. Revoke them before removing it.",
  },
  // Social sign-in (spec 1 §2.1, §4, §7; docs/identity.md "Social sign-in").
  social_provider_unknown: { status: 404, text: "Unknown sign-in provider: {provider}" },
  social_provider_unavailable: { status: 502, text: "{provider} could not be reached. Please try again later." },
  social_login_failed: { status: 401, text: "Signing in with {provider} failed. Please try again." },
  social_login_expired: {
    status: 400,
    text: "This sign-in with {provider} has expired or was already used. Please start it again.",
  },
  social_state_mismatch: {
    status: 400,
    text: "This sign-in with {provider} was not started from this browser. Please start it again.",
  },
  social_email_required: {
    status: 400,
    text: "{provider} did not share an email address. Allow access to your email address and try again.",
  },
  social_email_unverified: {
    status: 403,
    text: "{provider} has not verified your email address {email}. Verify it there first, then sign in again.",
  },
  social_email_unverified_existing: {
    status: 409,
    text: "An account with the email {email} already exists, but {provider} has not verified this email address, so they cannot be linked. Log in with your password instead.",
  },
  social_account_unverified: {
    status: 409,
    text: "An account with the email {email} already exists, but its email address was never verified. Verify it or reset its password first, then sign in with {provider} again.",
  },
  // OAuth applications (spec 1 §2.1 /login/oauth/{clientId}, §7 POST /oauth/authorize).
  oauth_application_unknown: { status: 404, text: "Unknown OAuth application: {clientId}" },
  oauth_unsupported_response_type: { status: 400, text: "Unsupported response_type: only code is supported" },
  oauth_redirect_uri_invalid: { status: 400, text: "redirect_uri: must be an https URL, or http on localhost" },
  // A token an OAuth application holds acts for the user, but never on credentials (security review 3).
  delegated_token_refused: { status: 403, text: "Tokens issued to an application cannot manage credentials." },
  // Support portal and chat handoffs (spec 1 §7, §8 missing-configuration texts).
  support_portal_not_configured: { status: 501, text: "The support portal is not configured on this server." },
  chat_missing_user_id: { status: 400, text: "Missing user_id" },
  chat_missing_username_hash: { status: 501, text: "Missing username hash" },
  // Support tickets (spec 3 §2 Support drawer, §4 "Support ticket", §5, §8; docs/support.md).
  something_went_wrong: { status: 502, text: "Something went wrong. Please try again later." },
  no_private_support: {
    status: 402,
    text: "The plan of this organization does not include private support. Upgrade the plan, or ask the community forum.",
  },
  support_email_required: { status: 400, text: "Add an email address to your account to create a support ticket." },
  support_email_unverified: { status: 403, text: "Verify your email address to use private support." },
  support_attachment_exceed_limit: { status: 413, text: "Attachments must be at most {limit} MB each." },
  support_attachment_type_not_allowed: {
    status: 415,
    text: "This file type cannot be attached: {filename}. Attach images, text or log files, PDF, or zip, tar or gzip archives.",
  },
  support_attachment_too_many: { status: 400, text: "A ticket can have at most {limit} attachments." },
  support_upload_invalid: { status: 400, text: "Unknown or already used upload token: {token}" },
  support_ticket_not_found: { status: 404, text: "Support ticket not found: {id}" },
  support_tickets_in_zendesk: {
    status: 409,
    text: "Support tickets are handled in Zendesk on this server: reply to the ticket's emails or in the support portal.",
  },
  // Platform staff's global roles (spec 1 §3, §6.1; docs/support.md "Platform staff").
  last_platform_admin: {
    status: 409,
    text: "{username} is the last platform administrator (balena_admin): make another user a platform administrator first, then remove this role.",
  },
  // Fleets, apps and blocks (spec 2 §5 "Creating a fleet", "Fleet changes", §8).
  missing_required_attributes: { status: 400, text: "missing required attributes" },
  invalid_device_type: { status: 400, text: "Invalid device type: {type}" },
  cannot_rename_legacy: { status: 400, text: "cannot rename classic and legacy applications" },
  repo_url_required: { status: 400, text: "must first enter repo url" },
  no_compatible_architecture: { status: 400, text: "no compatible cpu architecture found" },
  support_access_in_past: { status: 400, text: "Support access date-time cannot be earlier than now" },
  transfer_target_admin_required: {
    status: 403,
    text: "Only an administrator of the target organization can transfer a resource to it",
  },
  organization_frozen: { status: 403, text: "The organization is frozen" },
  application_type_not_available: { status: 400, text: "This fleet type is not available: {type}" },
  application_type_paid_only: { status: 402, text: "This fleet type needs a paid plan: {type}" },
  discontinued_device_type: { status: 400, text: "Discontinued device type: {type}" },
  // Provisioning keys (spec 1 §8 "missing provisioning identifier").
  missing_provisioning_identifier: { status: 400, text: "missing provisioning identifier" },
  // Deploy with button / from URL (spec 2 §8 texts).
  deploy_url_required: { status: 400, text: "Deploy from URL needs a repository or tarball URL." },
  deploy_repository_not_found: { status: 404, text: "Repository not found: {url}" },
  deploy_contract_invalid: { status: 422, text: "The balena.yml contract in the repository is invalid" },
  deploy_config_load_failed: { status: 502, text: "Error loading deploy configuration" },
  // Free plan (spec 2 §5 "Fleet changes", spec-decisions 13).
  free_plan_allowance_reached: { status: 402, text: "free plan allowance reached" },
  free_plan_allowance_exceeded: { status: 402, text: "provisioned more devices than free allowance" },
  // Devices (spec 2 §4, §5, §6, §8 keyed errors; docs/device-protocol.md).
  device_not_found: { status: 404, text: "Device not found: {device}" },
  // balena's words for a device its relay cannot reach (balena-sdk getSupervisorState and the
  // device actions surface them; balena answers 404, the dashboard's keyed error needs a 400).
  device_must_be_online: { status: 400, text: "No online device(s) found" },
  device_already_inactive: { status: 400, text: "The device is already inactive" },
  // An action that needs the device offline (deactivation), asked of an online one (spec 2 §8).
  device_must_be_offline: { status: 400, text: "The device must be offline for this action" },
  device_deactivation_paid_only: { status: 402, text: "Deactivation needs a paid plan" },
  device_frozen: {
    status: 403,
    text: "The device is frozen: the organization has more devices than its plan allows",
  },
  device_move_target_forbidden: {
    status: 403,
    text: "Only developers, operators and organization administrators of the target fleet can move a device into it",
  },
  device_release_not_in_fleet: { status: 400, text: "Release not found: {release}", balenaWords: true },
  local_mode_supervisor_too_old: { status: 400, text: "Local mode needs supervisor 4 or later" },
  local_mode_os_not_supported: { status: 400, text: "Local mode is not available on OS 1.x" },
  local_mode_dev_variant_required: { status: 400, text: "Local mode needs a development OS variant" },
  supervisor_locked: { status: 423, text: "Supervisor locked." },
  device_does_not_support_blinking: { status: 400, text: "The device does not support blinking" },
  // Sent with balena's exact body {"error":"updateRequired"} (user-actions.ts); the text is the dashboard's.
  device_update_required: {
    status: 400,
    text: "An update on the device is required: device actions need supervisor 7 or later",
  },
  device_relay_timeout: { status: 504, text: "The device did not answer in time" },
  // A health check or diagnostics report in none of the states of spec 2 §4.
  diagnostics_state_invalid: {
    status: 502,
    text: "The device answered an unknown health check state: {state} (expected configuring, done, error, idle or in_progress)",
  },
  // OS and supervisor updates (spec 2 §5, §7, §8; os-updates.ts).
  os_version_unparseable: { status: 400, text: "could not parse OS version" },
  os_release_not_found: { status: 404, text: "OS release not found" },
  update_not_supported_for_type_version: {
    status: 400,
    text: "This OS update is not supported for this device type and OS version: {reason}",
  },
  os_update_not_triggered: { status: 502, text: "Cannot start the update process" },
  supervisor_release_not_found: { status: 404, text: "supervisor release not found" },
  cannot_update_esr_supervisor: {
    status: 400,
    text: "The supervisor of a device running an ESR version of the OS cannot be updated separately: it is updated with the OS.",
  },
  // Web terminal (spec 2 §7, §8; terminal.ts).
  host_os_access_not_supported: { status: 403, text: "Host OS access is only available for certain OS versions" },
  // Variables (spec 2 §5 "Variables"; texts in variables.ts VARIABLE_TEXTS). The 409 text says
  // "unique": balena-sdk's envVar.set upserts (PATCH) on a 409 whose body matches /unique/i.
  variable_name_required: { status: 400, text: "A name is required" },
  variable_name_invalid: { status: 400, text: "{message}" },
  variable_reserved: { status: 400, text: "This environment variable is reserved and cannot be used." },
  config_variable_reserved: { status: 400, text: "This configuration variable is reserved and cannot be used." },
  variable_is_config_variable: {
    status: 400,
    text: "Configuration variables are managed through the Configuration page.",
  },
  variable_already_exists: { status: 409, text: "A variable with this name already exists: names must be unique" },
  variable_value_invalid: { status: 400, text: "{message}" },
  // Releases and builds (spec 2 §4 "Release rules", §8; texts in releases.ts RELEASE_TEXTS).
  release_not_found: { status: 404, text: "Release not found: {release}" },
  release_ambiguous: { status: 400, text: "Release is ambiguous: multiple releases match the hash" },
  already_finalized: { status: 409, text: "This release is already finalized." },
  cannot_unfinalize: {
    status: 400,
    text: "Finalizing is one way: you will not be able to turn this release back into a draft.",
  },
  cannot_validate_failed_releases: { status: 400, text: "Failed or cancelled releases cannot be marked valid." },
  cannot_delete_pinned_releases: {
    status: 409,
    text: "A release that a fleet or a device is pinned to (or targets) cannot be deleted.",
  },
  release_not_selectable: {
    status: 400,
    text: "Only a successful release that is not invalidated can be selected: {release}",
    balenaWords: true,
  },
  release_version_invalid: { status: 400, text: "The release version must be three numbers: major.minor.patch" },
  build_upload_invalid: { status: 400, text: "The upload is not a tar archive: {message}" },
  build_url_invalid: { status: 400, text: "The build URL must be an http(s) URL of a tar archive" },
  internal_error: { status: 500, text: "Something went wrong, please try again later." },
  service_unavailable: { status: 503, text: "Service unavailable." },
} as const satisfies Record<string, { status: number; text: string; balenaWords?: true }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** The header in which the API sends an error's `params` (URI-encoded JSON), for the dashboard's texts. */
export const ERROR_PARAMS_HEADER = "x-flotilla-error-params";

/** Whether the API words this code as balena does, the dashboard as the catalogue does (see above). */
export function hasBalenaWords(code: string): code is ErrorCode {
  const entry = (errorCatalogue as Record<string, { balenaWords?: true }>)[code];
  return entry?.balenaWords === true;
}

/** Fill `{name}` placeholders of a catalogue text. */
export function formatErrorText(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
