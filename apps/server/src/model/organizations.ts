import { FREE_PLAN_DEVICE_ALLOWANCE, SEAT_ROLES } from "@flotilla/domain";
import { computed, createdAt, editable, field, id, many, ref, resource, synonym } from "./dsl.ts";

const membershipUser = ref("user", "user", { writable: true, required: true });
const membershipOrganization = ref("is_member_of__organization", "organization", { writable: true, required: true });
const membershipRole = ref("organization_membership_role", "organization_membership_role", {
  writable: true,
  required: true,
});
const teamOrganization = ref("belongs_to__organization", "organization", { writable: true, required: true });
const teamMembershipUser = ref("user", "user", { writable: true, required: true });
const teamMembershipTeam = ref("is_member_of__team", "team", { writable: true, required: true });

const deviceCount = (o: string) =>
  `(SELECT count(*)::int FROM "device" AS od JOIN "application" AS oa ON oa."id" = od."belongs_to__application" WHERE oa."organization" = ${o}."id")`;
/** An active subscription to a plan other than `free`. */
export const paidPlan = (o: string) =>
  `EXISTS (SELECT 1 FROM "subscription" AS os JOIN "plan" AS op ON op."id" = os."is_for__plan" WHERE os."is_for__organization" = ${o}."id" AND os."starts_on__date" <= now() AND (os."ends_on__date" IS NULL OR os."ends_on__date" > now()) AND op."billing_code" IS DISTINCT FROM 'free')`;

export const organizationResources = [
  resource({
    name: "organization",
    table: "organization",
    alternateKeys: [["handle"]],
    fields: [
      id,
      createdAt,
      editable("name", "Text", true),
      editable("handle", "Text"),
      editable("company_name", "Text"),
      editable("industry", "Text"),
      editable("website", "Text"),
      field("billing_account_code", "Text"),
      field("has_past_due_invoice_since__date", "Date Time"),
      field("is_frozen", "Boolean"),
      // Written as a data URL of the image (organizations/logo.ts), read as the stored file's WebResource.
      editable("logo_image", "JSON"),
      field("is_using__billing_version", "Text"),
      field("is_enforcing_saml_login", "Boolean"),
      // Free plan allowance (spec 3 §3, spec 2 §5): asked for by name only (they scan devices).
      {
        ...computed("total_device_count", "Integer", deviceCount),
        selectByDefault: false,
      },
      {
        // The free allowance, or null on a paid plan (no subscription counts as the free plan).
        ...computed(
          "free_plan_device_allowance",
          "Integer",
          (o) => `(CASE WHEN ${paidPlan(o)} THEN NULL ELSE ${FREE_PLAN_DEVICE_ALLOWANCE} END)`,
        ),
        selectByDefault: false,
      },
      {
        // Free plan with more devices than the allowance: the ones beyond it are frozen (spec 2 §4).
        ...computed(
          "has_frozen_free_devices",
          "Boolean",
          (o) => `(NOT ${paidPlan(o)} AND ${deviceCount(o)} > ${FREE_PLAN_DEVICE_ALLOWANCE})`,
        ),
        selectByDefault: false,
      },
    ],
    navigations: [
      ...many(["application", "owns__application"], "application", "organization"),
      ...many(
        ["organization_membership", "user__is_member_of__organization", "includes__organization_membership"],
        "organization_membership",
        "is_member_of__organization",
      ),
      ...many(["team", "owns__team"], "team", "belongs_to__organization"),
      ...many(
        ["organization_invite", "invitee__is_invited_to__organization"],
        "organization_invite",
        "is_invited_to__organization",
      ),
      ...many(
        ["organization__has_private_access_to__device_type", "has_private_access_to__device_type"],
        "organization_has_private_access_to_device_type",
        "organization",
      ),
      ...many(["subscription"], "subscription", "is_for__organization"),
      ...many(["owns__credit_bundle"], "credit_bundle", "belongs_to__organization"),
      ...many(
        [
          "organization_credit_notification",
          "organization__owns_credit_notification_for__feature",
          "owns_credit_notification_for__feature",
        ],
        "organization_credit_notification",
        "organization",
      ),
      ...many(
        [
          "identity_provider_membership",
          "organization__is_authorized_by__identity_provider",
          "is_authorized_by__identity_provider",
          "includes__identity_provider_membership",
        ],
        "identity_provider_membership",
        "organization",
      ),
    ],
  }),
  resource({
    name: "organization_membership_role",
    table: "organization_membership_role",
    alternateKeys: [["name"]],
    fields: [id, field("name", "Text")],
  }),
  resource({
    name: "user__is_member_of__organization",
    aliases: ["organization_membership"],
    table: "organization_membership",
    alternateKeys: [["user", "is_member_of__organization"]],
    fields: [
      id,
      createdAt,
      membershipUser,
      synonym("includes__user", membershipUser),
      membershipOrganization,
      synonym("organization", membershipOrganization),
      membershipRole,
      // The seat the member takes (spec 3 §3): administrator for the organization's
      // administrators, else the highest role they hold on any of its fleets, else member.
      computed(
        "effective_seat_role",
        "Text",
        (m) => `(SELECT CASE WHEN sr."name" = 'administrator' THEN 'administrator' ELSE coalesce((
            SELECT sfa."role" FROM "fleet_access" AS sfa
            JOIN "application" AS sa ON sa."id" = sfa."application"
            JOIN "user" AS su ON su."actor" = sfa."actor"
            WHERE su."id" = ${m}."user" AND sa."organization" = ${m}."is_member_of__organization"
            ORDER BY array_position(ARRAY[${SEAT_ROLES.map((role) => `'${role}'`).join(", ")}]::text[], sfa."role") LIMIT 1
          ), 'member') END FROM "organization_membership_role" AS sr WHERE sr."id" = ${m}."organization_membership_role")`,
      ),
    ],
    navigations: [
      ...many(
        ["organization_membership_tag", "user__is_member_of__organization__has__tag_key"],
        "organization_membership_tag",
        "organization_membership",
      ),
    ],
  }),
  resource({
    name: "organization_membership_tag",
    table: "organization_membership_tag",
    alternateKeys: [["organization_membership", "tag_key"]],
    fields: [
      id,
      createdAt,
      ref("organization_membership", "user__is_member_of__organization", { writable: true, required: true }),
      editable("tag_key", "Text", true),
      editable("value", "Text", true),
    ],
  }),
  resource({
    name: "invitee",
    table: "invitee",
    fields: [id, createdAt, field("email", "Text")],
    navigations: [
      ...many(["invitee__is_invited_to__organization", "organization_invite"], "organization_invite", "invitee"),
      ...many(["invitee__is_invited_to__application", "application_invite"], "application_invite", "invitee"),
    ],
  }),
  resource({
    name: "invitee__is_invited_to__organization",
    aliases: ["organization_invite"],
    table: "organization_invite",
    // The SDK sends the invitee's email as `invitee`; the hooks turn it into the invitee row.
    parameters: { invitee: "Text" },
    fields: [
      id,
      createdAt,
      ref("invitee", "invitee"),
      ref("is_invited_to__organization", "organization", { writable: true, required: true }),
      synonym("organization", ref("is_invited_to__organization", "organization")),
      ref("organization_membership_role", "organization_membership_role", { writable: true }),
      editable("message", "Text"),
      ref("is_created_by__user", "user"),
    ],
  }),
  resource({
    name: "team",
    table: "team",
    fields: [id, createdAt, teamOrganization, editable("name", "Text", true), editable("description", "Text")],
    navigations: [
      ...many(
        ["team_membership", "user__is_member_of__team", "includes__user"],
        "team_membership",
        "is_member_of__team",
      ),
      ...many(["team_application_access", "grants_access_to__application"], "team_application_access", "team"),
    ],
  }),
  resource({
    name: "user__is_member_of__team",
    aliases: ["team_membership"],
    table: "team_membership",
    // balena-sdk `team.membership.create` names the user by `username`.
    parameters: { username: "Text" },
    alternateKeys: [["user", "is_member_of__team"]],
    fields: [
      id,
      createdAt,
      teamMembershipUser,
      synonym("includes__user", teamMembershipUser),
      teamMembershipTeam,
      synonym("team", teamMembershipTeam),
    ],
  }),
];
