import { call, type Http, unexpected } from "./http.ts";

export type TargetService = {
  id?: number;
  image_id?: number;
  image?: string;
  environment?: Record<string, string>;
  labels?: Record<string, string>;
  running?: boolean;
  composition?: unknown;
};
export type TargetRelease = { id?: number; services?: Record<string, TargetService> };
export type TargetApp = { id?: number; name?: string; class?: string; releases?: Record<string, TargetRelease> };
export type TargetState = { name?: string; config?: Record<string, string>; apps?: Record<string, TargetApp> };

export const DEFAULT_POLL_INTERVAL_MS = 60_000;
const MIN_POLL_INTERVAL_MS = 1_000;

/** `BALENA_SUPERVISOR_POLL_INTERVAL` (ms) of the target state's config, or the 60 s default. */
export function pollIntervalOf(state: TargetState | null): number {
  const raw = state?.config?.BALENA_SUPERVISOR_POLL_INTERVAL;
  const value = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(value) && value > 0 ? Math.max(MIN_POLL_INTERVAL_MS, value) : DEFAULT_POLL_INTERVAL_MS;
}

/** The first app's uuid and the commit of its first release: what the device should run. */
export function targetRelease(state: TargetState | null): {
  appUuid: string | null;
  commit: string | null;
  release: TargetRelease | null;
} {
  const [appUuid, app] = Object.entries(state?.apps ?? {})[0] ?? [null, null];
  const [commit, release] = Object.entries(app?.releases ?? {})[0] ?? [null, null];
  return { appUuid, commit, release };
}

/**
 * `GET /device/v3/{uuid}/state` with `If-None-Match`: remembers the ETag and the last state so a
 * 304 costs nothing. `fetch()` answers the state and whether it changed.
 */
export class TargetStateClient {
  etag: string | null = null;
  state: TargetState | null = null;

  constructor(
    private readonly http: Http,
    private readonly apiUrl: string,
    private readonly uuid: string,
    private readonly deviceKey: string,
  ) {}

  async fetch(): Promise<{ state: TargetState | null; changed: boolean }> {
    const answer = await call(this.http, this.apiUrl, {
      method: "GET",
      path: `/device/v3/${this.uuid}/state`,
      token: this.deviceKey,
      headers: this.etag ? { "if-none-match": this.etag } : {},
    });
    if (answer.status === 304) return { state: this.state, changed: false };
    if (answer.status !== 200) throw unexpected("the target state poll", answer);
    const body = JSON.parse(answer.text) as Record<string, TargetState>;
    this.state = body[this.uuid] ?? {};
    this.etag = answer.headers.etag ?? null;
    return { state: this.state, changed: true };
  }
}

/**
 * The supervisor version a target state asks for: the release of the app that runs the
 * `balena-supervisor` service (docs/device-protocol.md "OS and supervisor updates"), from its
 * `io.balena.supervisor.version` label or its image tag; null when none is set.
 */
export function targetSupervisorVersion(state: TargetState | null): string | null {
  for (const app of Object.values(state?.apps ?? {})) {
    for (const release of Object.values(app.releases ?? {})) {
      const service = release.services?.["balena-supervisor"];
      if (!service) continue;
      return service.labels?.["io.balena.supervisor.version"] ?? service.image?.split(":").pop() ?? null;
    }
  }
  return null;
}
