import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { DEVICE_ONLY } from "../../lib/device-only.ts";
import { mayDo } from "../data-api/actions.ts";
import { SERVER_SSH_USER } from "./jit-keys.ts";
import { userKeysByUsername } from "./queries.ts";

/**
 * What balenaOS asks the API for its VPN and SSH server (meta-balena's os-config and
 * cloud-public-sshkeys): `GET /os/v1/config` (the OpenVPN client's configuration and CA) and
 * `GET /auth/v1/public-keys/{username}` (the keys that may log in to the device as that user).
 */

/** The OpenVPN client configuration balenaOS writes to /etc/openvpn/openvpn.conf. */
export function openVpnClientConfig(vpn: { host: string; port: number }): string {
  return [
    "client",
    `remote ${vpn.host} ${vpn.port}`,
    "proto tcp-client",
    "dev resin-vpn",
    "dev-type tun",
    "resolv-retry infinite",
    "nobind",
    "persist-key",
    "persist-tun",
    "remote-cert-tls server",
    "ca /etc/openvpn/ca.crt",
    "auth-user-pass /var/volatile/vpn-auth",
    "auth-retry none",
    "script-security 2",
    "up /etc/openvpn-misc/upscript.sh",
    "up-restart",
    "down /etc/openvpn-misc/downscript.sh",
    "verb 3",
    "",
  ].join("\n");
}

export async function vpnRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, devices } = ctx;

  const osConfig = async () => {
    const vpn = ctx.config.vpn;
    const ca = ctx.vpnCa.pem;
    return {
      services: {
        // Empty without a VPN: balenaOS then leaves its OpenVPN client stopped.
        openvpn: { config: vpn && ca ? openVpnClientConfig(vpn) : "", ca: vpn && ca ? ca : "" },
        ssh: { authorized_keys: "" },
      },
      config: { overrides: {} },
      schema_version: "1.0.0",
    };
  };
  app.get("/os/v1/config", { config: { public: true } }, osConfig);
  app.get("/os/v1/config/", { config: { public: true } }, osConfig);

  app.get<{ Params: { username: string } }>("/auth/v1/public-keys/:username", DEVICE_ONLY, async (request, reply) => {
    const device = await devices.identities.of(request);
    const { username } = request.params;
    let keys: string[];
    if (username === SERVER_SSH_USER) keys = await ctx.jitKeys.current(device.id);
    else {
      // A user's own keys, when the user may open the device's host OS (balena's rule for local SSH).
      const user = await userKeysByUsername(db, username);
      const allowed =
        user && (await mayDo(db, { actor: user.actor, globalRoles: [] }, "device.ssh-host", { device: device.id }));
      keys = allowed ? user.keys : [];
    }
    return reply.type("text/plain; charset=utf-8").send(keys.join("\n"));
  });
}
