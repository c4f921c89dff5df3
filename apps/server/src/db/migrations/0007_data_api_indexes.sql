-- The dashboard's device list page and per-status fleet counts (docs/benchmarks.md, "Data API
-- (PostgreSQL, 100,000 devices)"): devices of a fleet by overall status, in name order, and counted
-- from the index alone (the INCLUDE columns are those the status is computed from). The
-- expression must stay identical to overallStatusSql in src/model/devices.ts, or PostgreSQL stops
-- using the index; `npm run bench -w @flotilla/server` warns when that happens.
CREATE INDEX "device_application_status_name_idx" ON "device" USING btree (
  "belongs_to__application",
  (CASE
    WHEN NOT "is_active" THEN 'inactive'
    WHEN "provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
    WHEN "last_connectivity_event" IS NULL OR "provisioning_progress" IS NOT NULL THEN 'configuring'
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
);
