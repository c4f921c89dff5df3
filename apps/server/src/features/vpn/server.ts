import fs from "node:fs/promises";
import type { FastifyBaseLogger } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { hashApiKey } from "../api-keys/service.ts";
import type { DeviceFrame, DeviceLink, RelayAction, RelayAnswer } from "../devices/relay.ts";
import type { Management } from "./management.ts";
import { type OpenVpnOptions, runOpenVpn } from "./openvpn.ts";
import { deviceForVpn, vpnDeviceByUuid } from "./queries.ts";
import { createDeviceShells } from "./shells.ts";
import { callSupervisor, supervisorCall } from "./supervisor-api.ts";

/**
 * The device VPN (docs/device-protocol.md "balenaOS devices"): balenaOS devices connect to an
 * OpenVPN server Flotilla runs, and while connected they are reachable as cloudlink devices are:
 * the relay's actions go to their Supervisor API, terminals, tunnels and commands to their SSH
 * server (shells.ts). Connect and disconnect set `is_connected_to_vpn`; a connected device is
 * seen by the heartbeat every HEARTBEAT_MS.
 */

const HEARTBEAT_MS = 20_000;

type Session = {
  cid: number;
  deviceId: number;
  address: string;
  handle: { refresh(): void; detach(): Promise<boolean>; frame(frame: DeviceFrame): void };
  connectedAt: Promise<string | null | undefined>;
  timer: NodeJS.Timeout;
};

export type DeviceVpn = { close(): Promise<void>; readonly sessions: number };

export async function startDeviceVpn(
  ctx: AppContext,
  logger: FastifyBaseLogger,
  options: OpenVpnOptions,
): Promise<DeviceVpn> {
  const { db, devices } = ctx;
  ctx.vpnCa.pem = await fs.readFile(options.certificates.caFile, "utf8");
  const sessions = new Map<number, Session>();
  let management: Management | undefined;
  const onError = (error: unknown) => logger.error({ err: error }, "vpn: a session was not recorded");

  /** `emit` hands the device's frames to the relay (its attached link's handle). */
  function link(deviceId: number, fleetId: number, address: string, emit: (frame: DeviceFrame) => void): DeviceLink {
    const shells = createDeviceShells({ ctx, deviceId, address, emit, logger });
    return {
      async request(action: RelayAction, data: unknown): Promise<RelayAnswer> {
        const call = supervisorCall(action, data, fleetId);
        if (!call) {
          return {
            status: 501,
            body: { message: "This action needs flotilla-agent on the device; balenaOS devices do not run it." },
          };
        }
        const api = await ctx.supervisorApis.of(deviceId);
        if (!api) {
          return {
            status: 503,
            body: { message: "The device has not reported its Supervisor API yet: try again after its next report." },
          };
        }
        try {
          return await callSupervisor({ address, ...api }, call);
        } catch (error) {
          if ((error as Error).name === "TimeoutError") throw new FlotillaError("device_relay_timeout");
          return { status: 502, body: { message: "The device's Supervisor did not answer over the VPN." } };
        }
      },
      sendFrame: (frame) => shells.send(frame),
      close: () => shells.close(),
    };
  }

  async function established(cid: number, uuid: string, address: string) {
    const device = await vpnDeviceByUuid(db, uuid);
    if (!device || !address) {
      management?.kill(cid);
      return;
    }
    let attached: Session["handle"] | undefined;
    const handle = devices.relay.attachLink(
      device.id,
      link(device.id, device.fleet, address, (frame) => attached?.frame(frame)),
    );
    attached = handle;
    devices.heartbeat.seen(device.id);
    const connectedAt = devices.vpnConnected(device.id, new Date()).then(
      (at) => at as string | null | undefined,
      (error: unknown) => {
        onError(error);
        return undefined;
      },
    );
    const timer = setInterval(() => {
      devices.heartbeat.seen(device.id);
      handle.refresh();
    }, HEARTBEAT_MS);
    timer.unref();
    sessions.set(cid, { cid, deviceId: device.id, address, handle, connectedAt, timer });
    logger.info({ device: uuid, address }, "vpn: device connected");
  }

  async function ended(cid: number) {
    const session = sessions.get(cid);
    if (!session) return;
    sessions.delete(cid);
    clearInterval(session.timer);
    if (await session.handle.detach()) {
      await devices.vpnDisconnected({ id: session.deviceId, since: await session.connectedAt });
    }
  }

  const vpn = await runOpenVpn(
    options,
    {
      ready: (opened) => {
        management = opened;
      },
      auth: ({ cid, kid, env, reauth }) => {
        const uuid = env.username ?? env.common_name ?? "";
        const key = env.password ?? "";
        // A renewal of a session that is up, without its password (auth-nocache): it stays.
        if (reauth && !key && sessions.has(cid)) return management?.allow(cid, kid);
        deviceForVpn(db, uuid, hashApiKey(key)).then(
          (found) => (found ? management?.allow(cid, kid) : management?.deny(cid, kid, "Unknown device or device key")),
          (error: unknown) => {
            logger.error({ err: error }, "vpn: authentication failed");
            management?.deny(cid, kid, "The server could not check the device key");
          },
        );
      },
      established: (cid, env) => {
        established(cid, env.common_name ?? env.username ?? "", env.ifconfig_pool_remote_ip ?? "").catch(onError);
      },
      disconnected: (cid) => {
        ended(cid).catch(onError);
      },
      stopped: () => {
        management = undefined;
        for (const cid of [...sessions.keys()]) ended(cid).catch(onError);
      },
    },
    logger,
  );

  return {
    get sessions() {
      return sessions.size;
    },
    async close() {
      await vpn.close();
      await Promise.all([...sessions.keys()].map((cid) => ended(cid).catch(onError)));
    },
  };
}
