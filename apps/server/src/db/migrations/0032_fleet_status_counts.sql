-- Per-fleet device counts by overall status, kept as devices change (docs/benchmarks.md, "One
-- fleet of 100,000 devices"): the fleet summary and list read a few rows instead of grouping a
-- fleet's devices on every view. Statement-level triggers add up each statement's changes from
-- its transition tables, so a batched write of 2,000 reports costs one small aggregate, and a
-- statement that changes no device's status or fleet writes nothing. The rows are taken in one
-- order, so two statements never wait on each other crosswise. The status expression must stay
-- identical to overallStatusSql in src/model/devices.ts (test/fleet-status-counts.test.ts
-- compares the counts with a count of the devices).
CREATE TABLE "fleet_status_count" (
  "application" integer NOT NULL,
  "status" text NOT NULL,
  "n" integer NOT NULL,
  PRIMARY KEY ("application", "status")
);--> statement-breakpoint
CREATE FUNCTION "flotilla_device_status"(d "device") RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN NOT d."is_active" THEN 'inactive'
    WHEN d."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
    WHEN d."last_connectivity_event" IS NULL OR d."provisioning_progress" IS NOT NULL THEN 'configuring'
    WHEN d."api_heartbeat_state" IN ('offline', 'unknown') AND NOT d."is_connected_to_vpn" THEN 'disconnected'
    WHEN (d."api_heartbeat_state" IN ('online', 'timeout')) <> d."is_connected_to_vpn" THEN 'reduced-functionality'
    WHEN d."update_status" IN ('downloading', 'downloaded', 'applying changes') OR d."download_progress" IS NOT NULL THEN 'updating'
    ELSE 'operational'
  END
$$;--> statement-breakpoint
CREATE FUNCTION "flotilla_count_device_statuses"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "fleet_status_count" ("application", "status", "n")
    SELECT "belongs_to__application", "flotilla_device_status"(nr), count(*)::int FROM new_rows nr
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("application", "status") DO UPDATE SET "n" = "fleet_status_count"."n" + EXCLUDED."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "fleet_status_count" ("application", "status", "n")
    SELECT "belongs_to__application", "flotilla_device_status"(o), -count(*)::int FROM old_rows o
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("application", "status") DO UPDATE SET "n" = "fleet_status_count"."n" + EXCLUDED."n";
  ELSE
    INSERT INTO "fleet_status_count" ("application", "status", "n")
    SELECT application, status, sum(change)::int FROM (
      SELECT o."belongs_to__application" AS application, "flotilla_device_status"(o) AS status, -1 AS change FROM old_rows o
      UNION ALL
      SELECT nr."belongs_to__application", "flotilla_device_status"(nr), 1 FROM new_rows nr
    ) AS changes
     GROUP BY 1, 2 HAVING sum(change) <> 0 ORDER BY 1, 2
    ON CONFLICT ("application", "status") DO UPDATE SET "n" = "fleet_status_count"."n" + EXCLUDED."n";
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "device_status_count_insert" AFTER INSERT ON "device"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "flotilla_count_device_statuses"();--> statement-breakpoint
CREATE TRIGGER "device_status_count_update" AFTER UPDATE ON "device"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "flotilla_count_device_statuses"();--> statement-breakpoint
CREATE TRIGGER "device_status_count_delete" AFTER DELETE ON "device"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "flotilla_count_device_statuses"();--> statement-breakpoint
INSERT INTO "fleet_status_count" ("application", "status", "n")
SELECT "belongs_to__application", "flotilla_device_status"(d), count(*)::int FROM "device" d GROUP BY 1, 2;
