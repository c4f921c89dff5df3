import {
  computed,
  createdAt,
  editable,
  field,
  id,
  many,
  modifiedAt,
  pairResource,
  ref,
  resource,
  synonym,
  through,
} from "./dsl.ts";

const privateAccessOrganization = ref("organization", "organization");
const privateAccessDeviceType = ref("has_private_access_to__device_type", "device_type");
const applicationMembershipUser = ref("user", "user", { writable: true, required: true });
const applicationMembershipApp = ref("is_member_of__application", "application", { writable: true, required: true });
const teamAccessTeam = ref("team", "team", { writable: true, required: true });
const teamAccessApp = ref("grants_access_to__application", "application", { writable: true, required: true });
const serviceApplication = ref("application", "application", { writable: true, required: true });

export const fleetResources = [
  resource({
    name: "cpu_architecture",
    table: "cpu_architecture",
    alternateKeys: [["slug"]],
    fields: [id, field("slug", "Text")],
    navigations: many(["is_supported_by__device_type"], "device_type", "is_of__cpu_architecture"),
  }),
  resource({
    name: "device_manufacturer",
    table: "device_manufacturer",
    alternateKeys: [["slug"]],
    fields: [id, field("slug", "Text"), field("name", "Text")],
  }),
  resource({
    name: "device_family",
    table: "device_family",
    alternateKeys: [["slug"]],
    fields: [
      id,
      field("slug", "Text"),
      field("name", "Text"),
      ref("is_manufactured_by__device_manufacturer", "device_manufacturer"),
    ],
  }),
  resource({
    name: "device_type",
    table: "device_type",
    alternateKeys: [["slug"]],
    fields: [
      id,
      field("slug", "Text"),
      field("name", "Text"),
      ref("is_of__cpu_architecture", "cpu_architecture"),
      field("logo", "Text"),
      field("contract", "JSON"),
      ref("belongs_to__device_family", "device_family"),
      field("is_private", "Boolean"),
    ],
    navigations: [
      ...many(["device_type_alias", "describes__device"], "device_type_alias", "device_type"),
      ...through(["is_accessible_privately_by__organization"], "organization", {
        table: "organization_has_private_access_to_device_type",
        from: "has_private_access_to__device_type",
        to: "organization",
      }),
      // The host-OS fleets of this device type.
      {
        name: "is_default_for__application",
        target: "application",
        join: (self: string, app: string) => `${app}."is_for__device_type" = ${self}."id" AND ${app}."is_host"`,
      },
    ],
  }),
  resource({
    name: "device_type_alias",
    table: "device_type_alias",
    alternateKeys: [["is_referenced_by__alias"]],
    fields: [id, ref("device_type", "device_type"), field("is_referenced_by__alias", "Text")],
  }),
  resource({
    name: "organization__has_private_access_to__device_type",
    aliases: ["organization_has_private_access_to_device_type"],
    table: "organization_has_private_access_to_device_type",
    fields: [
      id,
      privateAccessOrganization,
      synonym("is_accessible_privately_by__organization", privateAccessOrganization),
      privateAccessDeviceType,
      synonym("device_type", privateAccessDeviceType),
    ],
  }),
  resource({
    name: "application_type",
    table: "application_type",
    alternateKeys: [["slug"]],
    fields: [
      id,
      field("name", "Text"),
      field("slug", "Text"),
      field("description", "Text"),
      field("supports_web_url", "Boolean"),
      field("supports_multicontainer", "Boolean"),
      field("supports_gateway_mode", "Boolean"),
      field("needs__os_version_range", "Text"),
      field("requires_payment", "Boolean"),
      field("is_legacy", "Boolean"),
      field("maximum_device_count", "Integer"),
    ],
  }),
  resource({
    name: "application",
    table: "application",
    alternateKeys: [["slug"], ["uuid"]],
    fields: [
      id,
      createdAt,
      ref("actor", "actor"),
      field("uuid", "Text"),
      editable("is_of__class", "Text"),
      ref("organization", "organization", { writable: true, required: true }),
      editable("app_name", "Text", true),
      field("slug", "Text"),
      ref("is_for__device_type", "device_type", { writable: true, required: true }),
      ref("application_type", "application_type", { writable: true }),
      editable("should_track_latest_release", "Boolean"),
      ref("should_be_running__release", "release", { writable: true }),
      field("is_host", "Boolean"),
      editable("is_archived", "Boolean"),
      editable("is_public", "Boolean"),
      editable("is_discoverable", "Boolean"),
      editable("is_accessible_by_support_until__date", "Date Time"),
      editable("is_stored_at__repository_url", "Text"),
      // Counts for fleet lists, asked for by name only: kept per fleet and status as devices change
      // (migration 0032), not counted per view.
      {
        ...computed(
          "total_devices",
          "Integer",
          (a) =>
            `(SELECT coalesce(sum(fsc."n"), 0)::int FROM "fleet_status_count" AS fsc WHERE fsc."application" = ${a}."id")`,
        ),
        selectByDefault: false,
      },
      {
        ...computed(
          "device_count_grouped_by_status",
          "JSON",
          (a) =>
            `(SELECT coalesce(jsonb_object_agg(fsc."status", fsc."n"), '{}'::jsonb) FROM "fleet_status_count" AS fsc WHERE fsc."application" = ${a}."id" AND fsc."n" > 0)`,
        ),
        selectByDefault: false,
      },
    ],
    navigations: [
      ...many(["owns__device", "device"], "device", "belongs_to__application"),
      ...many(["owns__release", "release"], "release", "belongs_to__application"),
      ...many(["application_tag", "application__has__tag_key"], "application_tag", "application"),
      ...many(
        ["application_environment_variable", "application__has__env_var_name"],
        "application_environment_variable",
        "application",
      ),
      ...many(
        ["application_config_variable", "application__has__config_var_name"],
        "application_config_variable",
        "application",
      ),
      ...many(["build_environment_variable"], "build_environment_variable", "application"),
      ...many(["service", "application__has__service_name"], "service", "application"),
      ...many(
        ["user_application_membership", "user__is_member_of__application", "is_member_of__application"],
        "user_application_membership",
        "is_member_of__application",
      ),
      ...many(
        ["team_application_access", "is_accessible_by__team"],
        "team_application_access",
        "grants_access_to__application",
      ),
      ...many(
        ["application_invite", "invitee__is_invited_to__application"],
        "application_invite",
        "is_invited_to__application",
      ),
      // The roles the caller holds on the fleet (fleet_access rows are readable for oneself only).
      ...many(["fleet_access", "user_access_roles"], "fleet_access", "application"),
      // The SDK's getAllDirectlyAccessible: fleets the user holds a role on.
      {
        name: "is_directly_accessible_by__user",
        target: "user",
        join: (self: string, u: string) =>
          `EXISTS (SELECT 1 FROM "fleet_access" AS dfa WHERE dfa."application" = ${self}."id" AND dfa."actor" = ${u}."actor")`,
      },
    ],
  }),
  // Flotilla's own: who holds which role on which fleet (the `fleet_access` view), for the
  // permission filters and for the dashboard to show what the user may do.
  resource({
    name: "fleet_access",
    table: "fleet_access",
    idField: "application",
    fields: [ref("application", "application"), ref("actor", "actor"), field("role", "Text")],
  }),
  resource({
    name: "application_membership_role",
    table: "application_membership_role",
    alternateKeys: [["name"]],
    fields: [id, createdAt, modifiedAt, field("name", "Text"), field("description", "Text")],
  }),
  resource({
    name: "user__is_member_of__application",
    aliases: ["user_application_membership"],
    table: "user_application_membership",
    // balena-sdk `application.membership.create` names the user by `username`.
    parameters: { username: "Text" },
    alternateKeys: [["user", "is_member_of__application"]],
    fields: [
      id,
      createdAt,
      applicationMembershipUser,
      synonym("includes__user", applicationMembershipUser),
      applicationMembershipApp,
      synonym("application", applicationMembershipApp),
      ref("application_membership_role", "application_membership_role", { writable: true, required: true }),
    ],
  }),
  resource({
    name: "team_application_access",
    table: "team_application_access",
    alternateKeys: [["team", "grants_access_to__application"]],
    fields: [
      id,
      createdAt,
      teamAccessTeam,
      synonym("is_accessible_by__team", teamAccessTeam),
      teamAccessApp,
      synonym("application", teamAccessApp),
      ref("application_membership_role", "application_membership_role", { writable: true, required: true }),
    ],
  }),
  resource({
    name: "invitee__is_invited_to__application",
    aliases: ["application_invite"],
    table: "application_invite",
    parameters: { invitee: "Text" },
    fields: [
      id,
      createdAt,
      ref("invitee", "invitee"),
      ref("is_invited_to__application", "application", { writable: true, required: true }),
      synonym("application", ref("is_invited_to__application", "application")),
      ref("application_membership_role", "application_membership_role", { writable: true }),
      editable("message", "Text"),
      ref("is_created_by__user", "user"),
    ],
  }),
  pairResource({
    name: "application_tag",
    aliases: ["application__has__tag_key"],
    table: "application_tag",
    parent: { field: "application", target: "application" },
    key: "tag_key",
  }),
  pairResource({
    name: "application__has__env_var_name",
    aliases: ["application_environment_variable"],
    table: "application_environment_variable",
    parent: { field: "application", target: "application" },
    key: "name",
  }),
  pairResource({
    name: "build_environment_variable",
    table: "build_environment_variable",
    parent: { field: "application", target: "application" },
    key: "name",
  }),
  pairResource({
    name: "application__has__config_var_name",
    aliases: ["application_config_variable"],
    table: "application_config_variable",
    parent: { field: "application", target: "application" },
    key: "name",
  }),
  resource({
    name: "application__has__service_name",
    aliases: ["service"],
    table: "service",
    alternateKeys: [["application", "service_name"]],
    fields: [id, createdAt, serviceApplication, editable("service_name", "Text", true)],
    navigations: [
      ...many(["service_label", "application__has__service_name__has__label_name"], "service_label", "service"),
      ...many(
        ["service_environment_variable", "application__has__service_name__has__name"],
        "service_environment_variable",
        "service",
      ),
      ...many(["image", "is_built_by__image"], "image", "is_a_build_of__service"),
      ...many(
        ["service_install", "device__installs__application__has__service_name"],
        "service_install",
        "installs__service",
      ),
    ],
  }),
  pairResource({
    name: "application__has__service_name__has__label_name",
    aliases: ["service_label"],
    table: "service_label",
    parent: { field: "service", target: "service", synonyms: ["application__has__service_name"] },
    key: "label_name",
  }),
  pairResource({
    name: "application__has__service_name__has__name",
    aliases: ["service_environment_variable"],
    table: "service_environment_variable",
    parent: { field: "service", target: "service", synonyms: ["application__has__service_name"] },
    key: "name",
  }),
];
