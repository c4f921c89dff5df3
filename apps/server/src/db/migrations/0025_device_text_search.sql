-- The dashboard's free-text device filter (docs/benchmarks.md, "One fleet of 100,000 devices"):
-- `contains(tolower(field), 'text')` over the name, uuid, overall status, OS version and IP, and
-- over the tags' keys and values. The OData engine compiles `contains` to `LIKE '%…%'` and an OR
-- with a tag lambda to a UNION of its branches (src/odata/expressions.ts), so PostgreSQL answers
-- each from a pg_trgm GIN index on exactly the expression the filter names (`lower(col)`). The
-- status expression must stay identical to overallStatusSql in src/model/devices.ts, as in
-- migration 0007. A search text under 3 characters has no trigram: it filters the rows instead.
-- As in migration 0024, a database without pg_trgm migrates without these indexes.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'pg_trgm is not available (%): the device text filter runs without its indexes', SQLERRM;
END $$;--> statement-breakpoint
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX IF NOT EXISTS "device_name_trgm_idx" ON "device" USING gin (lower("device_name") gin_trgm_ops)';
    EXECUTE 'CREATE INDEX IF NOT EXISTS "device_uuid_trgm_idx" ON "device" USING gin (lower("uuid") gin_trgm_ops)';
    EXECUTE 'CREATE INDEX IF NOT EXISTS "device_os_version_trgm_idx" ON "device" USING gin (lower("os_version") gin_trgm_ops)';
    EXECUTE 'CREATE INDEX IF NOT EXISTS "device_ip_address_trgm_idx" ON "device" USING gin (lower("ip_address") gin_trgm_ops)';
    EXECUTE $sql$CREATE INDEX IF NOT EXISTS "device_overall_status_trgm_idx" ON "device" USING gin (lower(CASE
      WHEN NOT "is_active" THEN 'inactive'
      WHEN "provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
      WHEN "last_connectivity_event" IS NULL OR "provisioning_progress" IS NOT NULL THEN 'configuring'
      WHEN "api_heartbeat_state" IN ('offline', 'unknown') AND NOT "is_connected_to_vpn" THEN 'disconnected'
      WHEN ("api_heartbeat_state" IN ('online', 'timeout')) <> "is_connected_to_vpn" THEN 'reduced-functionality'
      WHEN "update_status" IN ('downloading', 'downloaded', 'applying changes') OR "download_progress" IS NOT NULL THEN 'updating'
      ELSE 'operational'
    END) gin_trgm_ops)$sql$;
    EXECUTE 'CREATE INDEX IF NOT EXISTS "device_tag_key_trgm_idx" ON "device_tag" USING gin (lower("tag_key") gin_trgm_ops)';
    EXECUTE 'CREATE INDEX IF NOT EXISTS "device_tag_value_trgm_idx" ON "device_tag" USING gin (lower("value") gin_trgm_ops)';
  END IF;
END $$;
