// The dashboard's requests as the benchmarks send them (bench-scale, apps/server/bench/big-fleet).

/** OData in a URL as the dashboard's SDK writes it: spaces and quotes escaped. */
export const enc = (text: string) => text.replaceAll(" ", "%20").replaceAll("'", "%27");

/** The columns and expansions of the dashboard's device table (apps/web/src/features/devices/data.ts). */
export const LIST_SELECT =
  "id,uuid,device_name,note,created_at,overall_status,overall_progress,status,is_online,is_connected_to_vpn,api_heartbeat_state,last_connectivity_event,is_active,is_frozen,is_web_accessible,is_in_local_mode,is_undervolted,ip_address,public_address,mac_address,os_version,os_variant,supervisor_version,update_status,last_update_status_event,download_progress,cpu_usage,cpu_temp,memory_usage,memory_total,storage_usage,storage_total,latitude,longitude,custom_latitude,custom_longitude,location,is_accessible_by_support_until__date";
const RELEASE = "$select=id,commit,raw_version";
export const LIST_EXPAND = [
  "is_of__device_type($select=id,slug,name;$expand=is_of__cpu_architecture($select=id))",
  `belongs_to__application($select=id,app_name,slug,is_accessible_by_support_until__date;$expand=should_be_running__release(${RELEASE}),user_access_roles($select=role))`,
  `is_running__release(${RELEASE})`,
  `is_pinned_on__release(${RELEASE})`,
  "device_tag($select=id,tag_key,value;$orderby=tag_key asc)",
].join(",");
