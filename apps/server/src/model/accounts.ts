import { computed, createdAt, editable, field, id, many, ref, resource } from "./dsl.ts";

export const accountResources = [
  resource({
    name: "actor",
    table: "actor",
    fields: [id],
    navigations: [
      ...many(["is_of__user"], "user", "actor"),
      ...many(["is_of__application"], "application", "actor"),
      ...many(["is_of__device"], "device", "actor"),
      ...many(["api_key"], "api_key", "is_of__actor"),
    ],
  }),
  // The password hash is not in the model: no query can ever return it.
  resource({
    name: "user",
    table: "user",
    alternateKeys: [["username"]],
    fields: [
      id,
      createdAt,
      ref("actor", "actor"),
      field("username", "Text"),
      field("email", "Text"),
      editable("first_name", "Text"),
      editable("last_name", "Text"),
      editable("company", "Text"),
      editable("account_type", "Text"),
      editable("has_disabled_newsletter", "Boolean"),
      computed("has_enabled_newsletter", "Boolean", (u) => `(NOT ${u}."has_disabled_newsletter")`),
      computed("has_password_set", "Boolean", (u) => `(${u}."password_hash" IS NOT NULL)`),
      field("must_be_verified", "Boolean"),
      field("is_verified", "Boolean"),
    ],
    navigations: [
      ...many(
        ["organization_membership", "user__is_member_of__organization", "is_member_of__organization"],
        "organization_membership",
        "user",
      ),
      ...many(["team_membership", "user__is_member_of__team", "is_member_of__team"], "team_membership", "user"),
      ...many(
        ["user_application_membership", "user__is_member_of__application", "is_member_of__application"],
        "user_application_membership",
        "user",
      ),
      ...many(["user_public_key", "user__has__public_key"], "user_public_key", "user"),
      ...many(["owns__device"], "device", "belongs_to__user"),
      ...many(["user_profile"], "user_profile", "is_of__user"),
      ...many(["owns__social_service_account"], "social_service_account", "belongs_to__user"),
      ...many(["owns__saml_account"], "saml_account", "belongs_to__user"),
      ...many(["owns__recovery_two_factor"], "recovery_two_factor", "belongs_to__user"),
    ],
  }),
  resource({
    name: "api_key",
    table: "api_key",
    fields: [
      id,
      createdAt,
      ref("is_of__actor", "actor"),
      editable("name", "Text"),
      editable("description", "Text"),
      editable("expiry_date", "Date Time"),
    ],
  }),
  resource({
    name: "user__has__public_key",
    aliases: ["user_public_key"],
    table: "user_public_key",
    fields: [
      id,
      createdAt,
      ref("user", "user", { writable: true, required: true }),
      editable("title", "Text", true),
      editable("public_key", "Text", true),
    ],
  }),
];
