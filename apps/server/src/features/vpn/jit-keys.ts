import crypto from "node:crypto";
import ssh2 from "ssh2";
import type { Bus } from "../devices/bus.ts";

// ssh2 is CommonJS without named exports Node can see: plain `node` needs the default import.
const { utils } = ssh2;

/**
 * One-time SSH keys for the server's sessions on a balenaOS device: the device's SSH server
 * (port 22222) asks the API for the keys of the user logging in (`GET /auth/v1/public-keys/
 * {username}` with its device key, meta-balena's cloud-public-sshkeys), and the server logs in as
 * SERVER_SSH_USER with a key made for that one connection, valid for KEY_TTL_MS. With several
 * instances the keys are shared in Redis, since the device may ask any of them.
 */

export const SERVER_SSH_USER = "flotilla";
const KEY_TTL_MS = 60_000;

export function createJitKeys(bus: Pick<Bus, "redis" | "prefix">) {
  const local = new Map<number, Map<string, number>>();
  const redisKey = (deviceId: number) => `${bus.prefix}vpn-ssh:${deviceId}`;
  return {
    /** A new key pair for one connection to the device; `forget` once it is logged in. */
    async issue(deviceId: number): Promise<{ privateKey: string; forget(): void }> {
      const { privateKey } = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      const pem = privateKey.export({ type: "sec1", format: "pem" }).toString();
      const parsed = utils.parseKey(pem);
      if (parsed instanceof Error) throw parsed;
      const line = `${parsed.type} ${parsed.getPublicSSH().toString("base64")}`;
      const until = Date.now() + KEY_TTL_MS;
      if (bus.redis) {
        await bus.redis.hset(redisKey(deviceId), line, String(until));
        await bus.redis.pexpire(redisKey(deviceId), KEY_TTL_MS);
      } else {
        const keys = local.get(deviceId) ?? new Map<string, number>();
        keys.set(line, until);
        local.set(deviceId, keys);
      }
      return {
        privateKey: pem,
        forget: () => {
          if (bus.redis) void bus.redis.hdel(redisKey(deviceId), line).catch(() => undefined);
          const keys = local.get(deviceId);
          keys?.delete(line);
          if (keys?.size === 0) local.delete(deviceId);
        },
      };
    },

    /** The keys that may log in to the device now, one per line as authorized_keys has them. */
    async current(deviceId: number): Promise<string[]> {
      const now = Date.now();
      const entries = bus.redis
        ? Object.entries(await bus.redis.hgetall(redisKey(deviceId))).map(
            ([line, until]) => [line, Number(until)] as const,
          )
        : [...(local.get(deviceId) ?? new Map<string, number>())];
      return entries.filter(([, until]) => until > now).map(([line]) => line);
    },
  };
}

export type JitKeys = ReturnType<typeof createJitKeys>;
