-- Who holds which role on which fleet (spec 2 §6: organization administrators act as fleet
-- administrators; direct fleet membership and team access add their roles). Permission filters
-- ask this view `EXISTS (… application = ? AND actor = ? AND role IN (…))`; the planner pushes the
-- conditions into each branch, which the indexes below serve.
CREATE VIEW "fleet_access" AS
  SELECT a."id" AS "application", u."actor" AS "actor", 'administrator'::text AS "role"
  FROM "application" a
  JOIN "organization_membership" om ON om."is_member_of__organization" = a."organization"
  JOIN "organization_membership_role" omr ON omr."id" = om."organization_membership_role" AND omr."name" = 'administrator'
  JOIN "user" u ON u."id" = om."user"
  UNION ALL
  SELECT uam."is_member_of__application", u."actor", amr."name"
  FROM "user_application_membership" uam
  JOIN "application_membership_role" amr ON amr."id" = uam."application_membership_role"
  JOIN "user" u ON u."id" = uam."user"
  UNION ALL
  SELECT taa."grants_access_to__application", u."actor", amr."name"
  FROM "team_application_access" taa
  JOIN "application_membership_role" amr ON amr."id" = taa."application_membership_role"
  JOIN "team_membership" tm ON tm."is_member_of__team" = taa."team"
  JOIN "user" u ON u."id" = tm."user";
--> statement-breakpoint
CREATE INDEX "organization_membership_org_idx" ON "organization_membership" ("is_member_of__organization");
--> statement-breakpoint
CREATE INDEX "user_application_membership_app_idx" ON "user_application_membership" ("is_member_of__application");
--> statement-breakpoint
CREATE INDEX "team_application_access_app_idx" ON "team_application_access" ("grants_access_to__application");
--> statement-breakpoint
CREATE INDEX "team_membership_team_idx" ON "team_membership" ("is_member_of__team");
--> statement-breakpoint
CREATE INDEX "application_organization_idx" ON "application" ("organization");
