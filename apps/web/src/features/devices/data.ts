import { keepPreviousData, type QueryClient, queryOptions, useQuery } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { useSdk } from "../../app-services.tsx";
import { pollingOptions } from "../../lib/query-client.ts";
import type { Sdk } from "../../lib/sdk.ts";
import type { DeviceStatus } from "../fleets/status.tsx";
import { fleetCan, fleetRoleOf } from "../orgs/access.ts";
import { pineOf } from "../orgs/data.ts";

export const DEVICE_PAGE_SIZES = [25, 50, 100] as const;

/** The columns a device row carries (list and pages). */
const DEVICE_FIELDS = [
  "id",
  "uuid",
  "device_name",
  "note",
  "created_at",
  "overall_status",
  "overall_progress",
  "status",
  "is_online",
  "is_connected_to_vpn",
  "api_heartbeat_state",
  "last_connectivity_event",
  "is_active",
  "is_frozen",
  "is_web_accessible",
  "is_in_local_mode",
  "is_undervolted",
  "ip_address",
  "public_address",
  "mac_address",
  "os_version",
  "os_variant",
  "supervisor_version",
  "update_status",
  "last_update_status_event",
  "download_progress",
  "cpu_usage",
  "cpu_temp",
  "memory_usage",
  "memory_total",
  "storage_usage",
  "storage_total",
  "latitude",
  "longitude",
  "custom_latitude",
  "custom_longitude",
  "location",
  "is_accessible_by_support_until__date",
] as const;

export interface Device {
  id: number;
  uuid: string;
  device_name: string;
  note: string | null;
  created_at: string;
  overall_status: DeviceStatus;
  overall_progress: number | null;
  status: string | null;
  is_online: boolean;
  is_connected_to_vpn: boolean;
  api_heartbeat_state: "online" | "offline" | "timeout" | "unknown";
  last_connectivity_event: string | null;
  is_active: boolean;
  is_frozen: boolean;
  is_web_accessible: boolean;
  is_in_local_mode: boolean;
  is_undervolted: boolean;
  ip_address: string | null;
  public_address: string | null;
  mac_address: string | null;
  os_version: string | null;
  os_variant: string | null;
  supervisor_version: string | null;
  update_status: string | null;
  last_update_status_event: string | null;
  download_progress: number | null;
  cpu_usage: number | null;
  cpu_temp: number | null;
  memory_usage: number | null;
  memory_total: number | null;
  storage_usage: number | null;
  storage_total: number | null;
  latitude: string | null;
  longitude: string | null;
  custom_latitude: string | null;
  custom_longitude: string | null;
  location: string | null;
  is_accessible_by_support_until__date: string | null;
  is_of__device_type: Array<{ id: number; slug: string; name: string; is_of__cpu_architecture: Array<{ id: number }> }>;
  belongs_to__application: Array<{
    id: number;
    app_name: string;
    slug: string;
    is_accessible_by_support_until__date: string | null;
    should_be_running__release: Array<{ id: number; commit: string; raw_version: string; is_final: boolean }>;
    user_access_roles: Array<{ role: string }>;
    /** Whether the fleet's type gives devices a public URL (spec 2 §3 application_type). */
    application_type: Array<{ supports_web_url: boolean }>;
  }>;
  is_running__release: Array<{ id: number; commit: string; raw_version: string; is_final: boolean }>;
  is_pinned_on__release: Array<{ id: number; commit: string; raw_version: string; is_final: boolean }>;
  /** What the device should run now: its pin, its rollout wave's, or the fleet's. */
  should_be_running__release: Array<{ id: number; commit: string; raw_version: string; is_final: boolean }>;
  device_tag: Array<{ id: number; tag_key: string; value: string }>;
}

const RELEASE = { $select: ["id", "commit", "raw_version", "is_final"] };

const deviceExpand = {
  is_of__device_type: { $select: ["id", "slug", "name"], $expand: { is_of__cpu_architecture: { $select: "id" } } },
  belongs_to__application: {
    $select: ["id", "app_name", "slug", "is_accessible_by_support_until__date"],
    $expand: {
      should_be_running__release: RELEASE,
      user_access_roles: { $select: "role" },
      application_type: { $select: "supports_web_url" },
    },
  },
  is_running__release: RELEASE,
  is_pinned_on__release: RELEASE,
  should_be_running__release: RELEASE,
  device_tag: { $select: ["id", "tag_key", "value"], $orderby: { tag_key: "asc" } },
};

/** One device by uuid; null (not undefined) when it does not exist or is not visible. */
export function deviceQuery(sdk: Sdk, uuid: string) {
  return queryOptions({
    queryKey: ["device", uuid],
    queryFn: async () => {
      const rows = await pineOf(sdk).get<Device[]>({
        resource: "device",
        options: { $select: [...DEVICE_FIELDS], $filter: { uuid }, $expand: deviceExpand },
      });
      return rows[0] ?? null;
    },
  });
}

/** A uuid prefix a URL may name a device by: 7 to 61 hex digits (a full uuid is 32 or 62). */
const SHORT_UUID = /^[0-9a-f]{7,61}$/i;

/**
 * The device a short uuid in a URL names (spec 2 §8): its full uuid when exactly one readable
 * device starts with it, "ambiguous" when several do ("Device is ambiguous: {device}"), else undefined.
 */
export async function resolveShortUuid(sdk: Sdk, prefix: string): Promise<string | "ambiguous" | undefined> {
  if (!SHORT_UUID.test(prefix)) return undefined;
  const rows = await pineOf(sdk).get<Array<{ uuid: string }>>({
    resource: "device",
    options: { $select: "uuid", $filter: { uuid: { $startswith: prefix.toLowerCase() } }, $top: 2 },
  });
  return rows.length > 1 ? "ambiguous" : rows[0]?.uuid;
}

export const loadDevice = (queryClient: QueryClient, sdk: Sdk, uuid: string) =>
  queryClient.ensureQueryData(deviceQuery(sdk, uuid));

export function useDevice(uuid: string) {
  const sdk = useSdk();
  // Device pages poll every 15 s with a grace of 0.33, never in hidden tabs (spec 2 §9).
  return useQuery({ ...deviceQuery(sdk, uuid), ...pollingOptions() });
}

/** What the caller may do on a device: the fleet role table of packages/domain (spec 2 §6). */
/** Who may update what (spec 2 §6): resin.device.actions-proxy-hup, …-supervisorupgrade. */
export function updateAbilities(userAccessRoles: ReadonlyArray<{ role: string }> | undefined) {
  const role = fleetRoleOf((userAccessRoles ?? []).map((row) => row.role));
  return {
    osUpdate: fleetCan(role, "device", "actions-proxy-hup"),
    supervisorUpdate: fleetCan(role, "device", "actions-proxy-supervisorupgrade"),
  };
}

/** The fleet devices' "Run command" batch action: who may run it (device.ssh-host / device.ssh). */
export function commandAbilities(abilities: { ssh: boolean; sshHost: boolean }) {
  return { run: abilities.ssh || abilities.sshHost, host: abilities.sshHost, service: abilities.ssh };
}

export function deviceAbilities(userAccessRoles: ReadonlyArray<{ role: string }> | undefined) {
  const role = fleetRoleOf((userAccessRoles ?? []).map((row) => row.role));
  return {
    role,
    update: fleetCan(role, "device", "update"),
    supervisor: fleetCan(role, "device", "supervisor-proxy-write"),
    move: fleetCan(role, "device", "move"),
    delete: fleetCan(role, "device", "delete"),
    tags: fleetCan(role, "device_tag", "all"),
    variables: fleetCan(role, "device_environment_variable", "all"),
    localMode: fleetCan(role, "device_config_variable", "all"),
    deactivate: fleetCan(role, "application", "deactivate-device"),
    diagnostics: fleetCan(role, "device", "access_diagnostics"),
    /** Clear the device's logs (resin.device_log.delete: safe-developer and up). */
    clearLogs: fleetCan(role, "device_log", "delete"),
    /** Web terminal to a service (resin.device.ssh) and to the host OS (resin.device.ssh-host). */
    ssh: fleetCan(role, "device", "ssh"),
    sshHost: fleetCan(role, "device", "ssh-host"),
    settings: role !== "observer" && role !== "member",
  };
}

export interface DeviceListQuery {
  fleetId: number;
  page: number;
  pageSize: number;
  sort: { field: string; direction: "asc" | "desc" } | undefined;
  /** Free text matched against name, uuid, status, OS version, IP and tags. */
  filter: string;
}

/** The sortable columns map to fields the server can order by. */
const SORTABLE = new Set([
  "device_name",
  "uuid",
  "overall_status",
  "last_connectivity_event",
  "os_version",
  "supervisor_version",
  "ip_address",
  "created_at",
]);

export function deviceListFilter(fleetId: number, text: string) {
  const term = text.trim();
  if (!term) return { belongs_to__application: fleetId };
  // A lambda's field is [alias, field]: "t/tag_key" would be sent with an encoded slash.
  const contains = (field: string | [string, string]) => ({
    $contains: [{ $tolower: { $: field } }, term.toLowerCase()],
  });
  return {
    belongs_to__application: fleetId,
    $or: [
      contains("device_name"),
      contains("uuid"),
      contains("overall_status"),
      contains("os_version"),
      contains("ip_address"),
      { device_tag: { $any: { $alias: "t", $expr: { $or: [contains(["t", "tag_key"]), contains(["t", "value"])] } } } },
    ],
  };
}

/** One page of a fleet's devices and the total, paged and sorted on the server (spec 2 §7). */
export function useFleetDevices(query: DeviceListQuery) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["fleet-devices", query],
    placeholderData: keepPreviousData,
    ...pollingOptions(),
    queryFn: async () => {
      const $filter = deviceListFilter(query.fleetId, query.filter);
      const sort = query.sort && SORTABLE.has(query.sort.field) ? query.sort : undefined;
      const [rows, total] = await Promise.all([
        pineOf(sdk).get<Device[]>({
          resource: "device",
          options: {
            $select: [...DEVICE_FIELDS],
            $filter,
            $expand: deviceExpand,
            $orderby: sort
              ? [{ [sort.field]: sort.direction }, { id: "asc" }]
              : [{ device_name: "asc" }, { id: "asc" }],
            $top: query.pageSize,
            $skip: query.page * query.pageSize,
          },
        }),
        pineOf(sdk).get<number>({ resource: "device", options: { $count: { $filter } } }),
      ]);
      return { rows, total };
    },
  });
}

/** Where a device is on the map: custom coordinates first, then reported ones, parsed as integers (spec 2 §2). */
export function deviceCoordinates(
  device: Pick<Device, "custom_latitude" | "custom_longitude" | "latitude" | "longitude">,
): [number, number] | undefined {
  const pick = (custom: string | null, reported: string | null) =>
    custom !== null && custom.trim() !== "" ? custom : reported;
  const lat = Number.parseInt(pick(device.custom_latitude, device.latitude) ?? "", 10);
  const lng = Number.parseInt(pick(device.custom_longitude, device.longitude) ?? "", 10);
  if (Number.isNaN(lat) || Number.isNaN(lng)) return undefined;
  return [lat, lng];
}

/** A metric bar's colour: green up to 60 %, warning up to 80 %, error above (spec 2 §9). */
export function metricLevel(percent: number): "success" | "warning" | "error" {
  if (percent <= 60) return "success";
  if (percent <= 80) return "warning";
  return "error";
}

/** A percentage of used/total, or undefined when either is unknown. */
export function usedPercent(used: number | null, total: number | null): number | undefined {
  if (used === null || total === null || total <= 0) return undefined;
  return Math.min(100, Math.round((used / total) * 100));
}

/** Online by heartbeat (online or timing out) or by cloudlink, as the server's `is_online` (spec 2 §3). */
export const deviceIsOnline = (device: Pick<Device, "api_heartbeat_state" | "is_connected_to_vpn">) =>
  device.api_heartbeat_state === "online" || device.api_heartbeat_state === "timeout" || device.is_connected_to_vpn;

/**
 * The device's web URL, when it has one (spec 2 §2 "public URL toggle (only when the device has a
 * web URL)"): its fleet's type supports web URLs and a base domain is configured.
 */
export const deviceWebUrl = (
  device: Pick<Device, "uuid" | "belongs_to__application">,
  baseDomain: string | null,
): string | undefined =>
  device.belongs_to__application[0]?.application_type[0]?.supports_web_url
    ? deviceUrl(device.uuid, baseDomain)
    : undefined;

/** The device's public URL: its uuid under the configured base domain (spec 2 §2). */
export const deviceUrl = (uuid: string, baseDomain: string | null) =>
  baseDomain ? `https://${uuid}.${baseDomain}` : undefined;

/** Local mode can be enabled from supervisor 4, not on OS 1.x, only on development images (spec 2 §5). */
export function localModeProblem(
  device: Pick<Device, "supervisor_version" | "os_version" | "os_variant">,
): "supervisor" | "os" | "variant" | undefined {
  const major = (version: string | null) => Number.parseInt(/(\d+)/.exec(version ?? "")?.[1] ?? "", 10);
  const supervisor = major(device.supervisor_version);
  if (Number.isNaN(supervisor) || supervisor < 4) return "supervisor";
  if (major(device.os_version) === 1) return "os";
  if (device.os_variant !== "dev" && device.os_variant !== "development") return "variant";
  return undefined;
}

/** The device of a `/devices/{uuid}` page (the route guard already sent missing devices away). */
export function usePageDevice() {
  const { uuid } = useParams({ strict: false }) as { uuid?: string };
  const query = useDevice(uuid ?? "");
  const device = query.data ?? undefined;
  return {
    uuid: uuid ?? "",
    device,
    abilities: deviceAbilities(device?.belongs_to__application[0]?.user_access_roles),
  };
}

/**
 * Why a device action cannot run now (spec 2 §8 keyed warnings), or undefined: a device still
 * configuring, or one that never connected (its status is `inactive` while it is active, as on
 * balena), is not fully provisioned; otherwise it must be on cloudlink.
 */
export function actionBlockedReason(
  device: Pick<Device, "overall_status" | "is_active" | "last_connectivity_event" | "is_connected_to_vpn">,
): "not_fully_provisioned" | "must_be_online" | undefined {
  const neverConnected = device.is_active && device.last_connectivity_event === null;
  if (device.overall_status === "configuring" || neverConnected) return "not_fully_provisioned";
  if (!device.is_connected_to_vpn) return "must_be_online";
  return undefined;
}
