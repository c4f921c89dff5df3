import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import WebSocket from "ws";
import { main } from "../src/cli.ts";
import { LABEL } from "../src/real/engine/service.ts";
import { engine, freePort, removeTestApp, TEST_IMAGE, testAppUuid } from "./containers.ts";
import { apiWithFleet, eventually, type TestApp } from "./support.ts";

/**
 * `flotilla-agent run` as a process, against the real API and a real engine (podman's Docker
 * API): real metrics, actions, the fleet's release running as a container, clean stop.
 */
let t: TestApp;
let fleet: { id: number };
let provisioningKey: string;
let ownerToken: string;
let port: number;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-agent-run-"));
const BIN = path.resolve(import.meta.dirname, "../bin/flotilla-agent.mjs");
const docker = engine();
const appUuid = testAppUuid();
const image = `localhost/flotilla-test/${appUuid}:web`;

beforeAll(async () => {
  const setup = await apiWithFleet({ paid: true });
  ({ t, fleet, provisioningKey } = setup);
  ownerToken = setup.owner.token;
  port = await freePort();
  await docker.getImage(TEST_IMAGE).tag({ repo: `localhost/flotilla-test/${appUuid}`, tag: "web" });
  // A release of one busybox httpd service, published on 127.0.0.1.
  await t.db.query(`UPDATE "application" SET uuid = $2 WHERE id = $1`, [fleet.id, appUuid]);
  const release = await t.factories.release(fleet);
  await t.db.query(`UPDATE "release" SET composition = $2 WHERE id = $1`, [
    release.id,
    JSON.stringify({ services: { web: { image, ports: [`127.0.0.1:${port}:8000`] } } }),
  ]);
  const { rows: services } = await t.db.query<{ id: number }>(
    `INSERT INTO "service" (application, service_name) VALUES ($1, 'web') RETURNING id`,
    [fleet.id],
  );
  const { rows: images } = await t.db.query<{ id: number }>(
    `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, $2, 'success') RETURNING id`,
    [services[0]?.id, image],
  );
  await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [
    images[0]?.id,
    release.id,
  ]);
  await t.db.query(`UPDATE "application" SET should_be_running__release = $2 WHERE id = $1`, [fleet.id, release.id]);
});
afterAll(async () => {
  await t.close();
  await removeTestApp(docker, appUuid, [image]);
  fs.rmSync(dir, { recursive: true, force: true });
});

const web = async () =>
  (await docker.listContainers({ all: true, filters: { label: [`${LABEL.appUuid}=${appUuid}`] } }))[0];

/** `flotilla-agent run` as a child process; its output collected. */
function startAgent(state: string) {
  const child = spawn(
    process.execPath,
    [BIN, "run", "--state", state, "--report-interval-ms", "1000", "--docker-socket", inject("dockerSocket")],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const output = { out: "", err: "" };
  child.stdout.on("data", (chunk) => {
    output.out += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output.err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output, exited };
}

const relay = async (action: string, body: unknown) => {
  const response = await fetch(`${t.url}/supervisor/v1/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
};

describe("flotilla-agent run", () => {
  it("reports this host's metrics, answers actions, refuses reboot without the flag, stops on SIGTERM", async () => {
    const state = path.join(dir, "agent.json");
    const registered = await main(
      [
        "register",
        "--api",
        t.url,
        "--provisioning-key",
        provisioningKey,
        "--fleet",
        String(fleet.id),
        "--state",
        state,
      ],
      { out: () => {}, err: () => {} },
    );
    expect(registered).toBe(0);
    const identity = JSON.parse(fs.readFileSync(state, "utf8")) as { uuid: string; deviceId: number };
    const { child, output, exited } = startAgent(state);
    try {
      const row = await eventually(async () => {
        const { rows } = await t.db.query<Record<string, unknown>>(
          "SELECT memory_total, storage_total, os_version, supervisor_version, is_connected_to_vpn FROM device WHERE uuid = $1",
          [identity.uuid],
        );
        return rows[0]?.is_connected_to_vpn && rows[0]?.memory_total ? rows[0] : null;
      }, 25_000);
      expect(row.memory_total).toBe(Math.round(os.totalmem() / 1024 / 1024));
      expect(row.storage_total).toEqual(expect.any(Number));
      expect(row.supervisor_version).toBe("16.7.0");
      expect(await relay("blink", { uuid: identity.uuid })).toEqual({
        status: 200,
        body: { Data: "OK", Error: null },
      });
      expect(await relay("reboot", { deviceId: identity.deviceId, data: { force: true } })).toEqual({
        status: 400,
        body: {
          Data: null,
          Error: "Reboot is not allowed on this device: start flotilla-agent run with --allow-reboot",
          message: "Reboot is not allowed on this device: start flotilla-agent run with --allow-reboot",
        },
      });
      const logs = await eventually(async () => {
        const held = (await t.ctx.devices.logs.history(identity.deviceId, 5000)).map((line) => line.message);
        return held.includes("Blinking") ? held : null;
      });
      expect(logs.some((line) => /^flotilla-agent .* started$/.test(line))).toBe(true);

      // The fleet's release runs as a real container: its published port answers.
      const page = await eventually(
        () => fetch(`http://127.0.0.1:${port}/index.html`).then((response) => response.text()),
        30_000,
        200,
      );
      expect(page).toBe("hello from busybox\n");
      const install = await eventually(async () => {
        const { rows } = await t.db.query<{ status: string }>(
          `SELECT ii.status FROM image_install ii JOIN device d ON d.id = ii.device WHERE d.uuid = $1`,
          [identity.uuid],
        );
        return rows[0]?.status === "Running" ? rows[0] : null;
      }, 15_000);
      expect(install.status).toBe("Running");
      // A device variable recreates the container with it.
      const first = (await web())?.Id as string;
      const created = await fetch(`${t.url}/v7/device_environment_variable`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
        body: JSON.stringify({ device: identity.deviceId, name: "GREETING", value: "hello" }),
      });
      expect(created.status).toBe(201);
      const recreated = await eventually(async () => {
        const now = await web();
        return now && now.Id !== first && now.State === "running" ? now : null;
      }, 20_000);
      expect((await docker.getContainer(recreated.Id).inspect()).Config.Env).toContain("GREETING=hello");
      // Restart from the dashboard's service control: a new start time.
      const startedAt = (await docker.getContainer(recreated.Id).inspect()).State.StartedAt;
      const restart = await fetch(`${t.url}/supervisor/v2/applications/${fleet.id}/restart-service`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
        body: JSON.stringify({ deviceId: identity.deviceId, appId: fleet.id, data: { serviceName: "web" } }),
      });
      expect(restart.status).toBe(200);
      const after = await docker.getContainer(recreated.Id).inspect();
      expect(after.State.StartedAt).not.toBe(startedAt);
      expect(after.State.Running).toBe(true);
      // The service terminal, as the dashboard opens it: a shell inside the container.
      const socket = new WebSocket(`${t.url.replace(/^http/, "ws")}/terminal/v1/connect`);
      let text = "";
      socket.on("message", (raw) => {
        const message = JSON.parse(raw.toString()) as { event: string; data?: string };
        if (message.event === "data") text += message.data;
      });
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      socket.send(
        JSON.stringify({
          event: "authentication",
          token: ownerToken,
          uuid: identity.uuid,
          target: "web",
          cols: 80,
          rows: 24,
        }),
      );
      try {
        await eventually(
          () => {
            socket.send(JSON.stringify({ event: "data", data: "echo in-$((40 + 2)) $GREETING\r" }));
            return text.includes("in-42 hello");
          },
          20_000,
          500,
        );
      } finally {
        socket.close();
      }
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    const { out, err } = output;
    expect(out).toContain(`device ${identity.uuid} running against ${t.url}`);
    expect(out).toContain("Blinking");
    expect(out).toContain("action blink → 200");
    expect(out).toContain("action reboot (force) → 400");
    expect(out).toContain("SIGTERM: stopping");
    expect(err).toBe("");

    // The containers outlive the agent, and a new agent process keeps them as they are.
    const running = await web();
    expect(running?.State).toBe("running");
    const again = startAgent(state);
    try {
      await eventually(() => again.output.out.includes("1 container kept"), 20_000);
      expect((await web())?.Id).toBe(running?.Id);
    } finally {
      again.child.kill("SIGTERM");
    }
    expect(await again.exited).toBe(0);
  }, 90_000);

  it("stops with a clear error when the container engine cannot be reached", async () => {
    const err: string[] = [];
    const code = await main(
      ["run", "--state", path.join(dir, "agent.json"), "--docker-socket", path.join(dir, "none.sock")],
      {
        out: () => {},
        err: (line) => err.push(line),
      },
    );
    expect(code).toBe(1);
    expect(err.join("\n")).toContain(
      `cannot reach a container engine (Docker Engine API) at ${path.join(dir, "none.sock")}`,
    );
  });
});
