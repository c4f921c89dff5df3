-- The plan catalogue every installation starts with (spec 3 §3, §9; decisions 13 and 14). Money
-- is in cents: annual prices are per year (about 10% under twelve months). Included devices are
-- counted on `device:microservices` for every fleet type; the other `device:*` features carry
-- the per-device prices of add-ons. Seat prices per month (spec 3 §6): observer free, limited
-- operator and operator $29, limited developer, developer and administrator $49.
INSERT INTO "feature" ("slug", "title", "billing_code") VALUES
  ('device:microservices', 'Microservices devices', 'device:microservices'),
  ('device:essentials', 'Essentials devices', 'device:essentials'),
  ('device:legacy-v2', 'Legacy v2 devices', 'device:legacy-v2'),
  ('device:legacy-v1', 'Legacy v1 devices', 'device:legacy-v1'),
  ('member:administrator', 'Administrator seats', 'member:administrator'),
  ('member:developer', 'Developer seats', 'member:developer'),
  ('member:safe-developer', 'Limited developer seats', 'member:safe-developer'),
  ('member:operator', 'Operator seats', 'member:operator'),
  ('member:safe-operator', 'Limited operator seats', 'member:safe-operator'),
  ('member:observer', 'Observer seats', 'member:observer'),
  ('preview:safe-roles', 'Limited access roles (preview)', NULL),
  ('saml', 'SAML single sign-on', NULL),
  ('support:community', 'Community support', NULL),
  ('support:standard', 'Standard support', NULL),
  ('support:priority', 'Priority support', NULL),
  ('support:premium', 'Premium support', NULL);
--> statement-breakpoint
INSERT INTO "support_tier" ("slug", "title", "includes_private_support", "includes__SLA") VALUES
  ('community', 'Community', false, NULL),
  ('standard', 'Standard', true, 'First response within 2 business days'),
  ('priority', 'Priority', true, 'First response within 1 business day'),
  ('premium', 'Premium', true, '24/7, first response within 1 hour for critical issues');
--> statement-breakpoint
INSERT INTO "support_feature" ("feature", "support_tier")
SELECT f."id", t."id" FROM (VALUES
  ('support:community', 'community'),
  ('support:standard', 'standard'),
  ('support:priority', 'priority'),
  ('support:premium', 'premium')
) AS s(feature, tier)
JOIN "feature" f ON f."slug" = s.feature
JOIN "support_tier" t ON t."slug" = s.tier;
--> statement-breakpoint
INSERT INTO "plan" ("billing_code", "title", "monthly_price", "annual_price", "can_self_serve", "is_legacy", "is_valid_until__date") VALUES
  ('free', 'Free', 0, 0, true, false, NULL),
  ('prototype-v2', 'Prototype', 9900, 106920, true, false, NULL),
  ('pilot-v2', 'Pilot', 29900, 322920, true, false, NULL),
  ('production-v2', 'Production', 139900, 1510920, true, false, NULL),
  ('enterprise-v2', 'Enterprise', 499900, 5398920, false, false, NULL),
  ('solo', 'Solo', 2900, 31320, false, true, '2023-01-01T00:00:00Z');
--> statement-breakpoint
INSERT INTO "plan_feature" ("plan", "feature", "quantity")
SELECT p."id", f."id", i.quantity FROM (VALUES
  ('free', 'device:microservices', 10),
  ('free', 'member:administrator', 1),
  ('free', 'support:community', 1),
  ('prototype-v2', 'device:microservices', 20),
  ('prototype-v2', 'member:administrator', 1),
  ('prototype-v2', 'preview:safe-roles', 1),
  ('prototype-v2', 'support:standard', 1),
  ('pilot-v2', 'device:microservices', 50),
  ('pilot-v2', 'member:administrator', 2),
  ('pilot-v2', 'preview:safe-roles', 1),
  ('pilot-v2', 'support:standard', 1),
  ('production-v2', 'device:microservices', 150),
  ('production-v2', 'member:administrator', 5),
  ('production-v2', 'preview:safe-roles', 1),
  ('production-v2', 'saml', 1),
  ('production-v2', 'support:priority', 1),
  ('enterprise-v2', 'device:microservices', 1000),
  ('enterprise-v2', 'member:administrator', 10),
  ('enterprise-v2', 'preview:safe-roles', 1),
  ('enterprise-v2', 'saml', 1),
  ('enterprise-v2', 'support:premium', 1),
  ('solo', 'device:microservices', 20),
  ('solo', 'member:administrator', 1),
  ('solo', 'support:community', 1)
) AS i(plan, feature, quantity)
JOIN "plan" p ON p."billing_code" = i.plan
JOIN "feature" f ON f."slug" = i.feature;
--> statement-breakpoint
-- Add-ons: extra devices per device and month (prototype $3.00 microservices and $2.00 legacy;
-- pilot, production and enterprise $2.00 and $1.50; spec 3 §9) and member seats. The free plan
-- sells nothing (devices beyond its allowance are frozen, paid roles are unavailable) except free
-- observer seats. Enterprise add-ons go through sales.
INSERT INTO "plan_addon" ("plan", "feature", "base_price", "can_self_serve", "bills_dynamically")
SELECT p."id", f."id", a.base_price, p."can_self_serve", a.bills_dynamically FROM (VALUES
  ('prototype-v2', 'device:microservices', 300, true),
  ('prototype-v2', 'device:essentials', 300, true),
  ('prototype-v2', 'device:legacy-v2', 200, true),
  ('prototype-v2', 'device:legacy-v1', 200, true),
  ('pilot-v2', 'device:microservices', 200, true),
  ('pilot-v2', 'device:essentials', 200, true),
  ('pilot-v2', 'device:legacy-v2', 150, true),
  ('pilot-v2', 'device:legacy-v1', 150, true),
  ('production-v2', 'device:microservices', 200, true),
  ('production-v2', 'device:essentials', 200, true),
  ('production-v2', 'device:legacy-v2', 150, true),
  ('production-v2', 'device:legacy-v1', 150, true),
  ('enterprise-v2', 'device:microservices', 200, true),
  ('enterprise-v2', 'device:essentials', 200, true),
  ('enterprise-v2', 'device:legacy-v2', 150, true),
  ('enterprise-v2', 'device:legacy-v1', 150, true),
  ('free', 'member:observer', 0, false)
) AS a(plan, feature, base_price, bills_dynamically)
JOIN "plan" p ON p."billing_code" = a.plan
JOIN "feature" f ON f."slug" = a.feature;
--> statement-breakpoint
INSERT INTO "plan_addon" ("plan", "feature", "base_price", "can_self_serve", "bills_dynamically")
SELECT p."id", f."id", s.base_price, p."can_self_serve", true
FROM "plan" p
CROSS JOIN (VALUES
  ('member:administrator', 4900),
  ('member:developer', 4900),
  ('member:safe-developer', 4900),
  ('member:operator', 2900),
  ('member:safe-operator', 2900),
  ('member:observer', 0)
) AS s(feature, base_price)
JOIN "feature" f ON f."slug" = s.feature
WHERE p."billing_code" IN ('prototype-v2', 'pilot-v2', 'production-v2', 'enterprise-v2');
