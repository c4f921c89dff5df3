import { type ChildProcess, execFile, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

/**
 * A device in its own network namespace, linked to this host by a veth pair, for the balenaOS
 * tests (../shared/notes/balenaos-devices.md): it reaches only the host's end of the link, and
 * the host reaches it there and over the VPN. Names and addresses are made per run and removed
 * by `remove`, so parallel and crashed runs leave nothing behind. Needs root (ip netns, /dev/net/tun).
 */

const run = promisify(execFile);

export type DeviceNamespace = {
  name: string;
  /** This host's address on the link: where the device reaches the API and the VPN. */
  hostAddress: string;
  deviceAddress: string;
  /** Starts a process inside the namespace. */
  spawn(command: string, args: string[], env?: Record<string, string>): ChildProcess;
  remove(): Promise<void>;
};

export function assertCanRunNamespaces() {
  if (process.getuid?.() !== 0 || !fs.existsSync("/dev/net/tun")) {
    throw new Error(
      "The balenaOS device tests run a device in its own network namespace with a real OpenVPN client: they need root and /dev/net/tun (ip netns, veth pairs).",
    );
  }
}

export async function createDeviceNamespace(): Promise<DeviceNamespace> {
  assertCanRunNamespaces();
  const id = crypto.randomBytes(3).toString("hex");
  const name = `flt-${id}`;
  const hostLink = `fh${id}`;
  const deviceLink = `fd${id}`;
  // A /30 in 10.233.0.0/16 that no interface here uses yet.
  const used = (await run("ip", ["-o", "-4", "addr", "show"])).stdout;
  let third = 0;
  let fourth = 0;
  do {
    third = crypto.randomInt(0, 256);
    fourth = crypto.randomInt(0, 64) * 4;
  } while (used.includes(`10.233.${third}.${fourth + 1}/`));
  const hostAddress = `10.233.${third}.${fourth + 1}`;
  const deviceAddress = `10.233.${third}.${fourth + 2}`;
  const processes = new Set<ChildProcess>();
  const remove = async () => {
    for (const child of processes) if (child.exitCode === null) child.kill("SIGKILL");
    await run("ip", ["netns", "del", name]).catch(() => undefined);
    await run("ip", ["link", "del", hostLink]).catch(() => undefined);
  };
  try {
    await run("ip", ["netns", "add", name]);
    await run("ip", ["link", "add", hostLink, "type", "veth", "peer", "name", deviceLink]);
    await run("ip", ["link", "set", deviceLink, "netns", name]);
    await run("ip", ["addr", "add", `${hostAddress}/30`, "dev", hostLink]);
    await run("ip", ["link", "set", hostLink, "up"]);
    const inside = (args: string[]) => run("ip", ["netns", "exec", name, ...args]);
    await inside(["ip", "addr", "add", `${deviceAddress}/30`, "dev", deviceLink]);
    await inside(["ip", "link", "set", deviceLink, "up"]);
    await inside(["ip", "link", "set", "lo", "up"]);
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    name,
    hostAddress,
    deviceAddress,
    spawn(command, args, env = {}) {
      const child = spawn("ip", ["netns", "exec", name, command, ...args], {
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...process.env, ...env },
      });
      processes.add(child);
      child.once("exit", () => processes.delete(child));
      return child;
    },
    remove,
  };
}

/** A CA and a server certificate for `host` (openssl), as the VPN and TLS need them. */
export async function issueTestCertificates(dir: string, host: string) {
  fs.mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=Flotilla test CA",
  ]);
  await run("openssl", [
    "req",
    ...ec,
    "-keyout",
    file("server.key"),
    "-out",
    file("server.csr"),
    "-subj",
    `/CN=${host}`,
  ]);
  const san = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? `IP:${host}` : `DNS:${host}`;
  fs.writeFileSync(
    file("ext"),
    `extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyAgreement\nsubjectAltName=${san},IP:127.0.0.1\n`,
  );
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    file("server.csr"),
    "-CA",
    file("ca.crt"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-out",
    file("server.crt"),
    "-days",
    "2",
    "-extfile",
    file("ext"),
  ]);
  return { caFile: file("ca.crt"), certFile: file("server.crt"), keyFile: file("server.key") };
}
