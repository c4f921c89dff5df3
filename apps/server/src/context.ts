import type { Config } from "./config.ts";
import type { Database } from "./db/index.ts";
import type { LoginThrottle } from "./features/auth/login-throttle.ts";
import type { SessionTokens } from "./features/auth/sessions.ts";
import type { createProofOfWork } from "./features/captcha/proof-of-work.ts";
import type { CommandScheduler } from "./features/command-runs/scheduler.ts";
import type { DeviceServices } from "./features/devices/services.ts";
import type { Mailer } from "./features/mail/mailer.ts";
import type { RolloutEngine } from "./features/rollouts/engine.ts";
import type { TerminalSessions } from "./features/terminal/sessions.ts";
import type { DeviceTunnels } from "./features/tunnels/tunnels.ts";
import type { JitKeys } from "./features/vpn/jit-keys.ts";
import type { SupervisorApis } from "./features/vpn/supervisor-api.ts";
import type { Sealer } from "./lib/sealed.ts";
import type { Throttle } from "./lib/throttle.ts";

/** What every feature's routes are built with: the configuration, the database and the token service. */
export type AppContext = {
  config: Config;
  db: Database;
  tokens: SessionTokens;
  /**
   * Failed logins (auth/login-throttle.ts), shared by the login (which counts them and lets a
   * second factor through a lock) and the password reset (which lifts the account's locks).
   */
  loginThrottle: LoginThrottle;
  /** Wrong two-factor codes per user, wherever a code is entered (login, 2FA routes, password reset). */
  totpGuard: Throttle;
  /** Seals webhook signing secrets at rest (lib/sealed.ts). */
  webhookSecrets: Sealer;
  /** The built-in captcha (FLOTILLA_CAPTCHA=pow). */
  captcha: ReturnType<typeof createProofOfWork>;
  /** Outgoing mail: SMTP_URL, or the outbox table. */
  mail: Mailer;
  /** The device path's per-instance state: target-state cache, heartbeat, reports, logs, cloudlink relay. */
  devices: DeviceServices;
  /** Phased rollouts: wave progression driven by state reports and a periodic tick (docs/rollouts.md). */
  rollouts: RolloutEngine;
  /** Terminal sessions to devices over cloudlink: the web terminal's and the SSH gateway's. */
  terminals: TerminalSessions;
  /** Bulk commands scheduled on this instance (docs/bulk-commands.md). */
  commandRuns: CommandScheduler;
  /** TCP tunnels to device ports over cloudlink: the SSH gateway's and HTTP CONNECT's. */
  tunnels: DeviceTunnels;
  /** balenaOS devices' Supervisor API ports and sealed secrets, as they report them (features/vpn). */
  supervisorApis: SupervisorApis;
  /** The device VPN's CA certificate (PEM), once the VPN started (features/vpn/server.ts). */
  vpnCa: { pem: string | undefined };
  /** One-time SSH keys of the server's sessions on balenaOS devices (features/vpn/jit-keys.ts). */
  jitKeys: JitKeys;
};
