// A balenaOS device's cloud-facing side for the VPN tests, run inside the device's network
// namespace (netns.ts) next to Debian's OpenVPN client:
// - the Supervisor's device API as balena documents it (v1 restart/reboot/shutdown/blink/update/
//   purge/device, v2 applications state and *-service), checking its key (`?apikey=` or Bearer);
// - the host's SSH server on 22222, which, as balenaOS's cloud-public-sshkeys does, asks the API
//   for the keys of the user logging in with the device key, and runs commands with `sh -c`;
// - the Supervisor's reports (with api_port and api_secret) and target-state polls.
// Each device API call is printed to stdout as one JSON line: {"call": "POST /v1/blink", ...}.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import http from "node:http";
import ssh2 from "ssh2";

const { Server, utils } = ssh2;
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const uuid = env("DEVICE_UUID");
const deviceKey = env("DEVICE_KEY");
const apiUrl = env("API_URL");
const apiSecret = env("API_SECRET");
const apiPort = Number(process.env.LISTEN_PORT ?? 48484);
const pollMs = Number(process.env.POLL_MS ?? 5000);
const print = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

// --- The Supervisor's device API ---
const answers = {
  "POST /v1/blink": [200, "OK"],
  "POST /v1/update": [204, ""],
  "POST /v1/reboot": [202, { Data: "OK", Error: null }],
  "POST /v1/shutdown": [202, { Data: "OK", Error: null }],
  "POST /v1/restart": [200, "OK"],
  "POST /v1/purge": [200, { Data: "OK", Error: null }],
  "GET /v1/device": [200, { api_port: apiPort, status: "Idle", update_pending: false, os_version: "balenaOS 6.0.13" }],
  "GET /v2/applications/state": [200, {}],
};
http
  .createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://device");
      const key = url.searchParams.get("apikey") ?? request.headers.authorization?.replace(/^Bearer /, "");
      const route = `${request.method} ${url.pathname.replace(/^\/v2\/applications\/\d+\/(\w+-service)$/, "/v2/applications/:appId/$1")}`;
      let parsed = null;
      try {
        parsed = body ? JSON.parse(body) : null;
      } catch {}
      print({ call: `${request.method} ${url.pathname}`, body: parsed, keyOk: key === apiSecret });
      if (key !== apiSecret) {
        response.writeHead(401).end("Unauthorized");
        return;
      }
      const [status, answer] = answers[route] ?? (route.includes("-service") ? [200, "OK"] : [404, "Not found"]);
      if (typeof answer === "string") response.writeHead(status, { "content-type": "text/plain" }).end(answer);
      else response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  })
  .listen(apiPort, "0.0.0.0", () => print({ event: "device-api-listening", port: apiPort }));

// --- The host's SSH server (balenaOS: port 22222, keys from the API) ---
const { privateKey: hostKey } = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const authorizedKeys = async (username) => {
  const response = await fetch(`${apiUrl}/auth/v1/public-keys/${encodeURIComponent(username)}`, {
    headers: { authorization: `Bearer ${deviceKey}` },
  });
  if (!response.ok) return [];
  return (await response.text())
    .split("\n")
    .filter(Boolean)
    .map((line) => utils.parseKey(line))
    .filter((key) => !(key instanceof Error));
};
new Server({ hostKeys: [hostKey.export({ type: "sec1", format: "pem" })] }, (client) => {
  client.on("error", () => undefined);
  client.on("authentication", (context) => {
    if (context.method !== "publickey") return context.reject(["publickey"]);
    authorizedKeys(context.username).then(
      (keys) => {
        const match = keys.find((key) => key.getPublicSSH().equals(context.key.data));
        if (!match) return context.reject(["publickey"]);
        if (context.signature && !match.verify(context.blob, context.signature, context.hashAlgo))
          return context.reject();
        print({ event: "ssh-login", username: context.username });
        context.accept();
      },
      () => context.reject(),
    );
  });
  client.on("session", (accept) => {
    const session = accept();
    let pty = false;
    session.on("pty", (acceptPty) => {
      pty = true;
      acceptPty?.();
    });
    session.on("window-change", (acceptChange) => acceptChange?.());
    const run = (channel, args) => {
      const child = spawn(args[0], args.slice(1), { stdio: "pipe" });
      channel.pipe(child.stdin);
      child.stdout.pipe(channel, { end: false });
      child.stderr.pipe(channel.stderr, { end: false });
      child.on("close", (code) => {
        channel.exit(code ?? 1);
        channel.end();
      });
      channel.on("close", () => child.kill());
    };
    // A shell on a terminal: `script` gives it one, as sshd's pty does.
    session.on("shell", (acceptShell) => run(acceptShell(), ["script", "-qfec", "/bin/sh", "/dev/null"]));
    session.on("exec", (acceptExec, _reject, info) => {
      print({ event: "ssh-exec", command: info.command });
      run(acceptExec(), pty ? ["script", "-qfec", info.command, "/dev/null"] : ["/bin/sh", "-c", info.command]);
    });
  });
}).listen(22222, "0.0.0.0", () => print({ event: "ssh-listening", port: 22222 }));

// --- The Supervisor's reports and polls ---
const report = () =>
  fetch(`${apiUrl}/device/v3/state`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${deviceKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      [uuid]: {
        api_port: apiPort,
        api_secret: apiSecret,
        os_version: "balenaOS 6.0.13",
        os_variant: "dev",
        supervisor_version: "17.0.0",
        status: "Idle",
      },
    }),
  }).then((response) => print({ event: "reported", status: response.status }));
const poll = () =>
  fetch(`${apiUrl}/device/v3/${uuid}/state`, { headers: { authorization: `Bearer ${deviceKey}` } }).then(
    (response) => response.arrayBuffer(),
    () => undefined,
  );
report().catch((error) => print({ event: "report-failed", message: error.message }));
setInterval(() => {
  poll();
}, pollMs).unref();
setInterval(() => {
  report().catch(() => undefined);
}, 30_000).unref();
process.on("SIGTERM", () => process.exit(0));
