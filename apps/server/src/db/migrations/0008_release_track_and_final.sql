ALTER TABLE "release" ADD COLUMN "release_track" text;--> statement-breakpoint
ALTER TABLE "release" ADD COLUMN "is_final" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Releases finalized before the column existed.
UPDATE "release" SET "is_final" = true WHERE "is_finalized_at__date" IS NOT NULL;
