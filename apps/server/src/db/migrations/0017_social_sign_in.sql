CREATE TABLE "oauth_authorization_code" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"is_for__oauth_application_authorization" integer NOT NULL,
	"redirect_uri" text NOT NULL,
	"auth_time" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_session" (
	"session" text PRIMARY KEY NOT NULL,
	"is_for__oauth_application_authorization" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "social_login_state" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"provider" text NOT NULL,
	"client_state_hash" text NOT NULL,
	"code_verifier" text NOT NULL,
	"nonce" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oauth_authorization_code" ADD CONSTRAINT "oauth_authorization_code_is_for__oauth_application_authorization_oauth_application_authorization_id_fk" FOREIGN KEY ("is_for__oauth_application_authorization") REFERENCES "public"."oauth_application_authorization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_session" ADD CONSTRAINT "oauth_session_session_user_session_id_fk" FOREIGN KEY ("session") REFERENCES "public"."user_session"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_session" ADD CONSTRAINT "oauth_session_is_for__oauth_application_authorization_oauth_application_authorization_id_fk" FOREIGN KEY ("is_for__oauth_application_authorization") REFERENCES "public"."oauth_application_authorization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oauth_authorization_code_expires_idx" ON "oauth_authorization_code" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "oauth_session_authorization_idx" ON "oauth_session" USING btree ("is_for__oauth_application_authorization");--> statement-breakpoint
CREATE INDEX "social_login_state_expires_idx" ON "social_login_state" USING btree ("expires_at");