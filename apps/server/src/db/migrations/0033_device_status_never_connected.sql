-- A device that never connected is `inactive`, as balena's API says of a registered device that
-- never came online (it was `configuring`): the overall status expression of src/model/devices.ts
-- changed, so the two indexes built on it (migrations 0007 and 0025) are built again on the new
-- one, the per-fleet counts' status function (migration 0032) computes the new one, and the
-- counts are taken again. The expression must stay identical to overallStatusSql (model.test.ts
-- and fleet-status-counts.test.ts compare them).
DROP INDEX IF EXISTS "device_application_status_name_idx";--> statement-breakpoint
CREATE INDEX "device_application_status_name_idx" ON "device" USING btree (
  "belongs_to__application",
  (CASE
    WHEN NOT "is_active" THEN 'inactive'
    WHEN "provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
    WHEN "provisioning_progress" IS NOT NULL THEN 'configuring'
    WHEN "last_connectivity_event" IS NULL AND "api_heartbeat_state" = 'unknown' AND NOT "is_connected_to_vpn" THEN 'inactive'
    WHEN "api_heartbeat_state" IN ('offline', 'unknown') AND NOT "is_connected_to_vpn" THEN 'disconnected'
    WHEN ("api_heartbeat_state" IN ('online', 'timeout')) <> "is_connected_to_vpn" THEN 'reduced-functionality'
    WHEN "update_status" IN ('downloading', 'downloaded', 'applying changes') OR "download_progress" IS NOT NULL THEN 'updating'
    ELSE 'operational'
  END),
  "device_name",
  "id"
) INCLUDE (
  "is_active", "provisioning_state", "last_connectivity_event", "provisioning_progress",
  "api_heartbeat_state", "is_connected_to_vpn", "update_status", "download_progress"
);--> statement-breakpoint
DROP INDEX IF EXISTS "device_overall_status_trgm_idx";--> statement-breakpoint
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE $sql$CREATE INDEX IF NOT EXISTS "device_overall_status_trgm_idx" ON "device" USING gin (lower(CASE
      WHEN NOT "is_active" THEN 'inactive'
      WHEN "provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
      WHEN "provisioning_progress" IS NOT NULL THEN 'configuring'
      WHEN "last_connectivity_event" IS NULL AND "api_heartbeat_state" = 'unknown' AND NOT "is_connected_to_vpn" THEN 'inactive'
      WHEN "api_heartbeat_state" IN ('offline', 'unknown') AND NOT "is_connected_to_vpn" THEN 'disconnected'
      WHEN ("api_heartbeat_state" IN ('online', 'timeout')) <> "is_connected_to_vpn" THEN 'reduced-functionality'
      WHEN "update_status" IN ('downloading', 'downloaded', 'applying changes') OR "download_progress" IS NOT NULL THEN 'updating'
      ELSE 'operational'
    END) gin_trgm_ops)$sql$;
  END IF;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "flotilla_device_status"(d "device") RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN NOT d."is_active" THEN 'inactive'
    WHEN d."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
    WHEN d."provisioning_progress" IS NOT NULL THEN 'configuring'
    WHEN d."last_connectivity_event" IS NULL AND d."api_heartbeat_state" = 'unknown' AND NOT d."is_connected_to_vpn" THEN 'inactive'
    WHEN d."api_heartbeat_state" IN ('offline', 'unknown') AND NOT d."is_connected_to_vpn" THEN 'disconnected'
    WHEN (d."api_heartbeat_state" IN ('online', 'timeout')) <> d."is_connected_to_vpn" THEN 'reduced-functionality'
    WHEN d."update_status" IN ('downloading', 'downloaded', 'applying changes') OR d."download_progress" IS NOT NULL THEN 'updating'
    ELSE 'operational'
  END
$$;--> statement-breakpoint
DELETE FROM "fleet_status_count";--> statement-breakpoint
INSERT INTO "fleet_status_count" ("application", "status", "n")
SELECT "belongs_to__application", "flotilla_device_status"(d), count(*)::int FROM "device" d GROUP BY 1, 2;
