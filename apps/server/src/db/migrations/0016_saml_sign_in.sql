CREATE TABLE "saml_assertion" (
	"id" text PRIMARY KEY NOT NULL,
	"identity_provider" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "saml_login_code" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"identity_provider" integer NOT NULL,
	"user" integer,
	"remote_id" text NOT NULL,
	"email" text NOT NULL,
	"display_name" text
);
--> statement-breakpoint
CREATE TABLE "saml_request" (
	"id" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "identity_provider" ADD COLUMN "created_by__actor" integer;--> statement-breakpoint
ALTER TABLE "saml_assertion" ADD CONSTRAINT "saml_assertion_identity_provider_identity_provider_id_fk" FOREIGN KEY ("identity_provider") REFERENCES "public"."identity_provider"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_login_code" ADD CONSTRAINT "saml_login_code_identity_provider_identity_provider_id_fk" FOREIGN KEY ("identity_provider") REFERENCES "public"."identity_provider"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_login_code" ADD CONSTRAINT "saml_login_code_user_user_id_fk" FOREIGN KEY ("user") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "saml_assertion_expires_idx" ON "saml_assertion" USING btree ("expires_at");--> statement-breakpoint
ALTER TABLE "identity_provider" ADD CONSTRAINT "identity_provider_created_by__actor_actor_id_fk" FOREIGN KEY ("created_by__actor") REFERENCES "public"."actor"("id") ON DELETE set null ON UPDATE no action;