import { createdAt, editable, field, id, many, ref, resource, synonym } from "./dsl.ts";

// Synonyms of required foreign keys are writable but not required themselves (either name will do).
const idpMembershipOrganization = ref("organization", "organization", { writable: true, required: true });
const idpMembershipProvider = ref("is_authorized_by__identity_provider", "identity_provider", {
  writable: true,
  required: true,
});

/**
 * Sign-in related resources (spec 1 §3, spec 3 §3). Secrets stay out of the model: recovery codes
 * and OAuth client secrets are kept as hashes and never named here; the social provider's remote
 * id is not exposed either (balena's v7 model does not show it).
 */
export const identityResources = [
  // A view over "user" (migration 0005): read-only, one row per user, `id` is the user's id.
  resource({
    name: "user_profile",
    table: "user_profile",
    fields: [
      id,
      ref("is_of__user", "user"),
      field("email", "Text"),
      field("first_name", "Text"),
      field("last_name", "Text"),
      field("company", "Text"),
      field("account_type", "Text"),
      field("has_disabled_newsletter", "Boolean"),
      field("is_verified", "Boolean"),
      field("must_be_verified", "Boolean"),
      field("has_password_set", "Boolean"),
    ],
  }),
  resource({
    name: "social_service_account",
    table: "social_service_account",
    fields: [id, createdAt, ref("belongs_to__user", "user"), field("provider", "Text"), field("display_name", "Text")],
  }),
  resource({
    name: "saml_account",
    table: "saml_account",
    fields: [
      id,
      createdAt,
      ref("belongs_to__user", "user"),
      ref("was_generated_by__identity_provider", "identity_provider"),
      field("remote_id", "Text"),
      field("display_name", "Text"),
    ],
  }),
  resource({
    name: "identity_provider",
    table: "identity_provider",
    alternateKeys: [["sso_identifier"]],
    fields: [
      id,
      createdAt,
      editable("sso_identifier", "Text", true),
      editable("entry_point", "Text", true),
      editable("issuer", "Text", true),
      editable("certificate", "Text", true),
      editable("requires_signed_authn_response", "Boolean"),
      // Lets the creator see the provider until it has its first organization (permissions).
      field("created_by__actor", "Integer"),
    ],
    navigations: many(
      [
        "identity_provider_membership",
        "organization__is_authorized_by__identity_provider",
        "authorizes__organization",
        "authorizes__organization__is_authorized_by__identity_provider",
        "authorizes__identity_provider_membership",
      ],
      "identity_provider_membership",
      "is_authorized_by__identity_provider",
    ),
  }),
  resource({
    name: "organization__is_authorized_by__identity_provider",
    aliases: ["identity_provider_membership"],
    table: "identity_provider_membership",
    alternateKeys: [["organization", "is_authorized_by__identity_provider"]],
    fields: [
      id,
      createdAt,
      idpMembershipOrganization,
      synonym("authorizes__organization", { ...idpMembershipOrganization, required: false }),
      idpMembershipProvider,
      synonym("identity_provider", { ...idpMembershipProvider, required: false }),
      ref("grants_access_to__team", "team", { writable: true }),
    ],
  }),
  resource({
    name: "oauth_application",
    table: "oauth_application",
    alternateKeys: [["client_id"]],
    fields: [
      id,
      createdAt,
      // Written by platform administrators only (permissions); the client id is generated when not given.
      editable("name", "Text", true),
      editable("client_id", "Text"),
      editable("redirect_uri", "Text", true),
      editable("description", "Text"),
    ],
    navigations: many(
      ["oauth_application_authorization"],
      "oauth_application_authorization",
      "is_for__oauth_application",
    ),
  }),
  resource({
    name: "oauth_application_authorization",
    table: "oauth_application_authorization",
    alternateKeys: [["belongs_to__user", "is_for__oauth_application"]],
    fields: [
      id,
      createdAt,
      ref("belongs_to__user", "user", { writable: true, required: true }),
      ref("is_for__oauth_application", "oauth_application", { writable: true, required: true }),
    ],
  }),
  // The code's hash is not in the model: no query can ever return or test it.
  resource({
    name: "recovery_two_factor",
    table: "recovery_two_factor",
    fields: [id, createdAt, ref("belongs_to__user", "user"), field("used_timestamp", "Date Time")],
  }),
];
