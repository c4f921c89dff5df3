-- `user_profile` (balena v7): a user's own details, read-only, one row per user with the user's id.
-- `has_password_set` tells accounts made through a social or SAML login (no password) from the
-- others; the password hash itself never leaves the "user" table.
CREATE VIEW "user_profile" AS
  SELECT
    u."id",
    u."id" AS "is_of__user",
    u."email",
    u."first_name",
    u."last_name",
    u."company",
    u."account_type",
    u."has_disabled_newsletter",
    u."is_verified",
    u."must_be_verified",
    (u."password_hash" IS NOT NULL) AS "has_password_set"
  FROM "user" u;
