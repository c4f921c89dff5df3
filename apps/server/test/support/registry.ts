import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../../../..");
const INSTALL = "sudo apt-get update && sudo apt-get install -y podman runc docker-registry busybox-static";

/** A free port on 127.0.0.1 (the registry's address must be known before the API starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** podman's configuration for this sandbox, written by scripts/ensure-containers.sh. */
export const CONTAINERS_CONF = path.join(ROOT, ".cache/containers/containers.conf");

/**
 * The CNCF distribution registry and podman: scripts/ensure-containers.sh installs them (as root)
 * and writes CONTAINERS_CONF, or fails with the command to run. Never a silent skip.
 */
export function ensureContainerTools(): string {
  const find = () =>
    [
      "/usr/bin/docker-registry",
      ...(process.env.PATH ?? "").split(":").map((dir) => path.join(dir, "docker-registry")),
    ].find((file) => fs.existsSync(file));
  const podman = (process.env.PATH ?? "").split(":").some((dir) => fs.existsSync(path.join(dir, "podman")));
  // Only when something is missing: the agent's set-up may run the script at the same time.
  if (find() && podman && fs.existsSync(CONTAINERS_CONF)) return find() as string;
  try {
    execFileSync("bash", [path.join(ROOT, "scripts/ensure-containers.sh")], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "");
    throw new Error(
      `The registry token tests need docker-registry and podman.\n${stderr}\nInstall them with:\n  ${INSTALL}`,
    );
  }
  const binary = find();
  if (!binary)
    throw new Error(
      `The registry token tests need the CNCF registry (docker-registry). Install it with:\n  ${INSTALL}`,
    );
  return binary;
}

export type TestRegistry = { host: string; url: string; stop(): Promise<void> };

/**
 * A real registry on 127.0.0.1:`port` (plain HTTP), with token auth trusting `token.certificatePem`
 * (or open to all without `token`: an upstream registry), its storage in a temporary directory
 * removed by `stop`.
 */
export async function startRegistry(options: {
  port: number;
  token?: { realm: string; issuer: string; certificatePem: string };
}): Promise<TestRegistry> {
  const binary = ensureContainerTools();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-registry-"));
  const host = `127.0.0.1:${options.port}`;
  const token = options.token;
  if (token) fs.writeFileSync(path.join(dir, "root.crt"), token.certificatePem);
  fs.writeFileSync(
    path.join(dir, "config.yml"),
    [
      "version: 0.1",
      "log:",
      "  level: error",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${dir}/storage`,
      "http:",
      `  addr: ${host}`,
      ...(token
        ? [
            "auth:",
            "  token:",
            `    realm: ${token.realm}`,
            `    service: ${host}`,
            `    issuer: ${token.issuer}`,
            `    rootcertbundle: ${dir}/root.crt`,
          ]
        : []),
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(binary, ["serve", path.join(dir, "config.yml")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  child.stderr?.on("data", (chunk) => {
    errors = (errors + chunk).slice(-4000);
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://${host}`;
  const end = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`docker-registry exited (${child.exitCode}): ${errors}`);
    }
    // With token auth on, /v2/ answers 401 once the registry listens (200 when open).
    const status = await fetch(`${url}/v2/`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === (token ? 401 : 200)) break;
    if (Date.now() > end) {
      await stop();
      throw new Error(`docker-registry did not answer on ${host}: ${errors}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { host, url, stop };
}

/**
 * A registry client as docker and podman are: a request, its 401 challenge, a token from the realm
 * with the credentials as Basic auth, the request again with the token. Returns the realm's answer
 * when it refuses.
 */
export function registryClient(base: string, credentials: { username: string; password: string } | undefined) {
  const tokens = new Map<string, string>();
  return async function request(pathname: string, init: RequestInit = {}): Promise<Response> {
    const url = new URL(pathname, base);
    const send = (token: string | undefined) =>
      fetch(url, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string>),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      });
    const cached = tokens.get(url.pathname.split("/").slice(0, 4).join("/"));
    const first = await send(cached);
    if (first.status !== 401) return first;
    const challenge = first.headers.get("www-authenticate") ?? "";
    const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    if (!challenge.startsWith("Bearer ") || !params.realm) return first;
    const realm = new URL(params.realm);
    if (params.service) realm.searchParams.set("service", params.service);
    if (params.scope) realm.searchParams.set("scope", params.scope);
    const answer = await fetch(realm, {
      headers: credentials
        ? {
            authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`,
          }
        : {},
    });
    if (answer.status !== 200) return answer;
    const { token } = (await answer.json()) as { token: string };
    tokens.set(url.pathname.split("/").slice(0, 4).join("/"), token);
    return send(token);
  };
}
