import { call, type Http, unexpected } from "./http.ts";

/**
 * The `supervisor_version` every Flotilla device reports: the balena supervisor API level the
 * agent speaks (the dashboard gates features such as local mode on it).
 */
export const SUPERVISOR_VERSION = "16.7.0";

export type ServiceReport = { image?: string; status: string; download_progress: number | null };
export type AppReport = {
  release_uuid?: string | null;
  releases: Record<string, { update_status: string; services: Record<string, ServiceReport> }>;
};

/** The fields of `PATCH /device/v3/state` (docs/device-protocol.md "Current state"). */
export type CurrentState = {
  status?: string;
  os_version?: string | null;
  os_variant?: string | null;
  supervisor_version?: string;
  ip_address?: string;
  mac_address?: string;
  api_port?: number;
  cpu_usage?: number | null;
  cpu_temp?: number | null;
  memory_usage?: number;
  memory_total?: number;
  storage_usage?: number | null;
  storage_total?: number | null;
  storage_block_device?: string | null;
  is_undervolted?: boolean;
  provisioning_progress?: number | null;
  provisioning_state?: string;
  download_progress?: number | null;
  update_status?: string;
  apps?: Record<string, AppReport>;
};

/** The fields of `next` that differ from `previous` (all of them when there is no previous). */
export function changedFields(previous: CurrentState | null, next: CurrentState): CurrentState {
  if (!previous) return { ...next };
  const diff: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next)) {
    const before = (previous as Record<string, unknown>)[key];
    if (value === before) continue;
    if (typeof value === "object" && value !== null && JSON.stringify(value) === JSON.stringify(before)) continue;
    diff[key] = value;
  }
  return diff as CurrentState;
}

/**
 * `PATCH /device/v3/state`: the first report is full, later ones carry only the fields that
 * changed since the last report the API accepted (a failed report is sent again in the next).
 */
export class StateReporter {
  private accepted: CurrentState | null = null;

  constructor(
    private readonly http: Http,
    private readonly apiUrl: string,
    private readonly uuid: string,
    private readonly deviceKey: string,
  ) {}

  /** Sends what changed; answers the fields sent (empty when nothing changed and nothing was sent). */
  async report(state: CurrentState, options: { force?: boolean } = {}): Promise<CurrentState> {
    const diff = changedFields(this.accepted, state);
    if (Object.keys(diff).length === 0 && !options.force) return diff;
    const answer = await call(this.http, this.apiUrl, {
      method: "PATCH",
      path: "/device/v3/state",
      token: this.deviceKey,
      json: { [this.uuid]: diff },
    });
    if (answer.status < 200 || answer.status >= 300) throw unexpected("the state report", answer);
    this.accepted = { ...(this.accepted ?? {}), ...diff };
    return diff;
  }

  /** The next report is a full one again (after a reconnect or a reboot). */
  resetToFull() {
    this.accepted = null;
  }
}
