-- Registry repositories are owned, once and for good, by the fleet whose image the server first
-- gave the name (features/registry/access.ts). Before, the owner was the first image row naming
-- the location, so after the owner deleted its release an image row of another fleet naming the
-- same location took the repository over. A name is never reused: its row outlives the image and
-- the fleet (their columns become null).
CREATE TABLE "registry_repository" (
	"name" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"fleet" integer,
	"image" integer
);--> statement-breakpoint
ALTER TABLE "registry_repository" ADD CONSTRAINT "registry_repository_fleet_application_id_fk" FOREIGN KEY ("fleet") REFERENCES "public"."application"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_repository" ADD CONSTRAINT "registry_repository_image_image_id_fk" FOREIGN KEY ("image") REFERENCES "public"."image"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
INSERT INTO "registry_repository" ("name", "fleet", "image")
SELECT DISTINCT ON (r.name) r.name, s.application, i.id
  FROM "image" i
  JOIN "service" s ON s.id = i.is_a_build_of__service
  CROSS JOIN LATERAL (SELECT substring(i.is_stored_at__image_location FROM '/(v2/[0-9a-f]{32})(?:[:@].*)?$') AS name) r
 WHERE r.name IS NOT NULL
 ORDER BY r.name, i.id;
