-- A commit is unique among a fleet's successful releases only (as on balena): a failed build and
-- a later successful one of the same commit may both exist. Look-ups by commit keep an index.
DROP INDEX IF EXISTS "release_app_commit_key";--> statement-breakpoint
CREATE UNIQUE INDEX "release_app_commit_key" ON "release" USING btree ("belongs_to__application", "commit") WHERE "status" = 'success';--> statement-breakpoint
CREATE INDEX "release_app_commit_idx" ON "release" USING btree ("belongs_to__application", "commit");
