-- Support staff (docs/support.md "Platform staff"): the global roles exist from the start, so a
-- platform administrator can grant them; a ticket keeps its form as the requester filled it
-- (every field, shown to staff); staff mails are claimed once per ticket event (never sent twice,
-- whichever instance handles the event); the Admin → Users page reads each user's last sign-in
-- from the audit log, and searches usernames and emails.
INSERT INTO "role" ("name") VALUES ('balena_admin'), ('support_agent') ON CONFLICT ("name") DO NOTHING;--> statement-breakpoint
ALTER TABLE "support_ticket" ADD COLUMN "form" jsonb;--> statement-breakpoint
ALTER TABLE "support_ticket" ADD COLUMN "staff_notified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "support_ticket_comment" ADD COLUMN "staff_notified_at" timestamp with time zone;--> statement-breakpoint
-- Events from before this migration are not announced to staff afterwards.
UPDATE "support_ticket" SET "staff_notified_at" = "created_at";--> statement-breakpoint
UPDATE "support_ticket_comment" SET "staff_notified_at" = "created_at";--> statement-breakpoint
CREATE INDEX "audit_event_sign_in_idx" ON "audit_event" USING btree ("target_user","created_at") WHERE "action" = 'sign_in.succeeded';--> statement-breakpoint
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX IF NOT EXISTS "user_search_trgm_idx" ON "user" USING gin ((lower("username") || '' '' || lower(coalesce("email", ''''))) gin_trgm_ops)';
  END IF;
END $$;
