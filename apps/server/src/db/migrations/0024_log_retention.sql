CREATE TABLE "device_log_retention" (
	"organization" integer PRIMARY KEY NOT NULL,
	"max_age_days" integer,
	"max_lines_per_device" integer,
	"modified_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "device_log_retention_age_check" CHECK ("device_log_retention"."max_age_days" IS NULL OR "device_log_retention"."max_age_days" >= 1),
	CONSTRAINT "device_log_retention_lines_check" CHECK ("device_log_retention"."max_lines_per_device" IS NULL OR "device_log_retention"."max_lines_per_device" >= 1)
);
--> statement-breakpoint
ALTER TABLE "device_log_retention" ADD CONSTRAINT "device_log_retention_organization_organization_id_fk" FOREIGN KEY ("organization") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_log_device_time_idx" ON "device_log" USING btree ("device","timestamp","id");--> statement-breakpoint
CREATE INDEX "device_log_time_idx" ON "device_log" USING btree ("timestamp","id");--> statement-breakpoint
-- Log search's text match (ILIKE '%…%') uses a pg_trgm GIN index. PGlite loads pg_trgm
-- (db/connection.ts); a PostgreSQL server without the contrib package, or a role that may not
-- create extensions, keeps working without the index (search then filters the rows it walks).
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'pg_trgm is not available (%): log search runs without its text index', SQLERRM;
END $$;--> statement-breakpoint
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX IF NOT EXISTS "device_log_message_trgm_idx" ON "device_log" USING gin ("message" gin_trgm_ops)';
  END IF;
END $$;
