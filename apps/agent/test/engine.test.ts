import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { CurrentState } from "../src/protocol/state-report.ts";
import type { TargetService } from "../src/protocol/target-state.ts";
import { AppRunner, type EngineLog } from "../src/real/engine/apply.ts";
import { LABEL } from "../src/real/engine/service.ts";
import { RealHost } from "../src/real/host.ts";
import {
  engine,
  freePort,
  randomCommit,
  recordingRuntime,
  removeTestApp,
  TEST_IMAGE,
  targetState,
  testAppUuid,
} from "./containers.ts";
import { eventually } from "./support.ts";

/**
 * The real agent's containers against a real engine (podman's Docker API, containers-setup.ts):
 * one fleet's device goes through a release, a variable change, an agent restart, service
 * controls, a locked update and a new release.
 */
const docker = engine();
const appUuid = testAppUuid();
const lockRoot = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-locks-"));
/** Every report the host asks for, as it would have been sent. */
const reports: CurrentState[] = [];
const { runtime, lines } = recordingRuntime(() => reports.push(host.currentState()));
const images = { r1: `localhost/flotilla-test/${appUuid}:r1`, r2: `localhost/flotilla-test/${appUuid}:r2` };
let port: number;

const newHost = () =>
  new RealHost({
    allowReboot: false,
    updateLockFile: path.join(lockRoot, "host.lock"),
    engine: {
      docker,
      deviceUuid: "d".repeat(32),
      lockRoot,
      lockPollMs: 100,
      // Sent with pulls from the device's registry, as a device's key (the test registry asks for none).
      registryAuth: { registry: inject("registry"), username: `d_${"d".repeat(32)}`, password: "device-key" },
    },
  });
let host = newHost();

function release(
  commit: string,
  id: number,
  image: string,
  workerEnv: Record<string, string>,
  labels: Record<string, string> = {},
) {
  const services: Record<string, TargetService> = {
    web: {
      id: 11,
      image_id: 100 + id,
      image,
      environment: { GREETING: "hello" },
      labels,
      composition: { ports: [`127.0.0.1:${port}:8000`], restart: "always", volumes: ["data:/data"] },
    },
    worker: {
      id: 12,
      image_id: 200 + id,
      image,
      environment: workerEnv,
      labels,
      composition: {
        command: ["/bin/sh", "-c", "echo worker says $MODE; exec sleep 3600"],
        working_dir: "/tmp",
        user: "0",
        depends_on: ["web"],
        cap_add: ["NET_ADMIN"],
      },
    },
  };
  return targetState(appUuid, { commit, id, services });
}

async function containers() {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABEL.appUuid}=${appUuid}`] } });
  return Object.fromEntries(list.map((c) => [c.Labels[LABEL.serviceName] as string, c]));
}

/** The report once the runner has applied `commit` and every service runs. */
async function runningRelease(commit: string) {
  return eventually(
    async () => {
      await host.runner?.refresh();
      const report = host.currentState();
      const app = report.apps?.[appUuid];
      const services = Object.values(app?.releases[commit]?.services ?? {});
      // Running containers come a moment before an update ends (old images are removed first);
      // an agent that found nothing to change stays idle.
      const running = services.length === 2 && services.every((s) => s.status === "Running");
      const settled = report.update_status === "done" || report.update_status === "idle" || !report.update_status;
      return app?.release_uuid === commit && running && settled ? report : null;
    },
    30_000,
    200,
  );
}

/** Runs a command in the service's container; answers its exit code. */
const exec = async (service: string, command: string[]) => {
  const container = (await containers())[service];
  if (!container) throw new Error(`no ${service} container`);
  const run = await docker.getContainer(container.Id).exec({ Cmd: command, AttachStdout: true, AttachStderr: true });
  const stream = await run.start({});
  await new Promise((resolve) => {
    stream.on("end", resolve);
    stream.resume();
  });
  return (await run.inspect()).ExitCode;
};

beforeAll(async () => {
  port = await freePort();
  await docker.getImage(TEST_IMAGE).tag({ repo: `localhost/flotilla-test/${appUuid}`, tag: "r1" });
  await docker.getImage(TEST_IMAGE).tag({ repo: `localhost/flotilla-test/${appUuid}`, tag: "r2" });
});

afterAll(async () => {
  host.runner?.close();
  await removeTestApp(docker, appUuid, [...Object.values(images), `${inject("registry")}/flotilla-test/busybox:base`]);
  await docker
    .getVolume(`${appUuid}_data`)
    .remove()
    .catch(() => {});
  fs.rmSync(lockRoot, { recursive: true, force: true });
});

describe("the real agent runs the release on the engine", () => {
  const first = randomCommit();
  const second = randomCommit();

  it("brings up two services with their environment, ports, volumes and labels; an HTTP request answers", async () => {
    host.targetChanged(release(first, 1, images.r1, { MODE: "one" }), runtime);
    const report = await runningRelease(first);
    expect(report.apps?.[appUuid]?.releases[first]?.services.web).toEqual({
      image: images.r1,
      status: "Running",
      download_progress: null,
    });
    expect(report.update_status).toBe("done");
    const response = await fetch(`http://127.0.0.1:${port}/index.html`);
    expect(await response.text()).toBe("hello from busybox\n");
    const { web, worker } = await containers();
    const inspected = await docker.getContainer(worker?.Id as string).inspect();
    expect(inspected.Config.Env).toEqual(expect.arrayContaining(["MODE=one", "BALENA_SERVICE_NAME=worker"]));
    expect(inspected.Config.WorkingDir).toBe("/tmp");
    expect(inspected.Config.Labels).toMatchObject({
      [LABEL.appUuid]: appUuid,
      [LABEL.commit]: first,
      [LABEL.serviceName]: "worker",
      [LABEL.imageId]: "201",
      [LABEL.releaseId]: "1",
    });
    const webInspected = await docker.getContainer(web?.Id as string).inspect();
    expect(webInspected.HostConfig.RestartPolicy?.Name).toBe("always");
    expect(webInspected.Mounts.map((mount) => mount.Destination)).toEqual(
      expect.arrayContaining(["/data", "/tmp/balena"]),
    );
    // The unknown compose key is said, and the worker's output reaches the log stream with its service id.
    await eventually(() => lines.some((line) => line.message === "worker says one" && line.serviceId === 12));
    expect(lines.map((line) => line.message)).toContain(
      'Service worker: compose key "cap_add" is not supported by this agent and was not applied',
    );
  });

  it("a variable change recreates only the service whose environment changed", async () => {
    const before = await containers();
    host.targetChanged(release(first, 1, images.r1, { MODE: "two" }), runtime);
    const after = await eventually(async () => {
      const now = await containers();
      return now.worker && now.worker.Id !== before.worker?.Id && now.worker.State === "running" ? now : null;
    }, 30_000);
    expect(after.web?.Id).toBe(before.web?.Id);
    const inspected = await docker.getContainer(after.worker?.Id as string).inspect();
    expect(inspected.Config.Env).toContain("MODE=two");
    expect(lines.map((line) => line.message)).toEqual(
      expect.arrayContaining([
        "Applied environment variable MODE to worker",
        "Restarted service worker with its new environment",
      ]),
    );
    expect(lines.map((line) => line.message)).not.toContain("Restarted service web with its new environment");
    await runningRelease(first);
  });

  it("a restarted agent finds its containers and leaves them alone", async () => {
    const before = await containers();
    host.runner?.close();
    host = newHost();
    host.targetChanged(release(first, 1, images.r1, { MODE: "two" }), runtime);
    await host.runner?.apply();
    await runningRelease(first);
    const after = await containers();
    expect(Object.keys(after).sort()).toEqual(["web", "worker"]);
    expect(after.web?.Id).toBe(before.web?.Id);
    expect(after.worker?.Id).toBe(before.worker?.Id);
  });

  it("restart-service restarts the real container (a new start time); stop-service stops it", async () => {
    const id = (await containers()).web?.Id as string;
    const startedAt = (await docker.getContainer(id).inspect()).State.StartedAt;
    expect(await host.handle("restart-service", { serviceName: "web" }, runtime)).toEqual({
      status: 200,
      body: { Data: "OK", Error: null },
    });
    const after = await docker.getContainer(id).inspect();
    expect(after.State.Running).toBe(true);
    expect(after.State.StartedAt).not.toBe(startedAt);
    expect((await host.handle("stop-service", { imageId: 101 }, runtime)).status).toBe(200);
    expect(host.currentState().apps?.[appUuid]?.releases[first]?.services.web?.status).toBe("exited");
    expect((await host.handle("start-service", { serviceName: "web" }, runtime)).status).toBe(200);
    expect(host.currentState().apps?.[appUuid]?.releases[first]?.services.web?.status).toBe("Running");
    expect((await host.handle("restart-service", { serviceName: "nope" }, runtime)).status).toBe(404);
  });

  it("an update lock taken inside a container holds the new release until it is released", async () => {
    await exec("web", ["/bin/touch", "/tmp/balena/updates.lock"]);
    expect(host.runner?.locked()).toBe(true);
    expect((await host.handle("restart", {}, runtime)).status).toBe(423);
    const before = await containers();
    const waiting = lines.length;
    host.targetChanged(release(second, 2, images.r2, { MODE: "three" }), runtime);
    await eventually(() => lines.slice(waiting).some((line) => line.message === "Updates are locked, waiting"));
    // Held after download: the old release still runs and is still the one reported.
    const held = host.currentState();
    expect(held.update_status).toBe("downloaded");
    expect(held.apps?.[appUuid]?.release_uuid).toBe(first);
    const during = await containers();
    expect(during.web?.Id).toBe(before.web?.Id);
    expect(during.web?.State).toBe("running");
    await exec("web", ["/bin/rm", "/tmp/balena/updates.lock"]);
    // Then download-then-kill replaces both containers, and the old release's image goes.
    const report = await runningRelease(second);
    expect(report.apps?.[appUuid]?.releases[second]?.services.worker?.image).toBe(images.r2);
    const after = await containers();
    expect(Object.values(after).map((c) => c.Labels[LABEL.commit])).toEqual([second, second]);
    await expect(docker.getImage(images.r1).inspect()).rejects.toThrow();
    await docker.getImage(images.r2).inspect();
    expect(await (await fetch(`http://127.0.0.1:${port}/index.html`)).text()).toBe("hello from busybox\n");
  });

  it("BALENA_SUPERVISOR_OVERRIDE_LOCK applies an update while a lock is held", async () => {
    expect(await exec("web", ["/bin/touch", "/tmp/balena/updates.lock"])).toBe(0);
    try {
      const before = await containers();
      const state = release(second, 2, images.r2, { MODE: "five" });
      state.config = { BALENA_SUPERVISOR_OVERRIDE_LOCK: "1" };
      host.targetChanged(state, runtime);
      await host.runner?.apply();
      const after = await containers();
      expect(after.worker?.Id).not.toBe(before.worker?.Id);
      expect((await docker.getContainer(after.worker?.Id as string).inspect()).Config.Env).toContain("MODE=five");
    } finally {
      fs.rmSync(path.join(lockRoot, "services", appUuid, "web", "updates.lock"), { force: true });
    }
    host.targetChanged(release(second, 2, images.r2, { MODE: "three" }), runtime);
    await host.runner?.apply();
    await runningRelease(second);
  });

  it("the service terminal runs a shell inside the container", async () => {
    let output = "";
    let exited = false;
    const shell = await host.openShell(
      { target: "worker", cols: 80, rows: 24 },
      {
        output: (data) => {
          output += data;
        },
        exit: () => {
          exited = true;
        },
      },
    );
    shell.write("echo inside-$((40 + 2)) $MODE\r");
    await eventually(() => output.includes("inside-42 three"));
    shell.write("exit\r");
    await eventually(() => exited);
    await expect(host.openShell({ target: "nope", cols: 80, rows: 24 }, { output() {}, exit() {} })).rejects.toThrow(
      "Service not found: nope",
    );
  });

  it("a bulk command runs in the service's container: stdout and stderr apart, the exit code, and a kill", async () => {
    const run = (command: string) => {
      let stdout = "";
      let stderr = "";
      let kill = () => {};
      const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        host
          .exec(
            { target: "worker", command },
            {
              output: (data, stream) => {
                if (stream === "stdout") stdout += data;
                else stderr += data;
              },
              exit: (code) => resolve({ code, stdout, stderr }),
            },
          )
          .then((execution) => {
            kill = () => execution.kill();
          }, reject);
      });
      return { done, kill: () => kill(), output: () => stdout };
    };
    expect(await run("echo out-$((40 + 2)) $MODE; echo err >&2; exit 3").done).toEqual({
      code: 3,
      stdout: "out-42 three\n",
      stderr: "err\n",
    });
    const slow = run("echo started; sleep 30");
    await eventually(() => slow.output().includes("started"));
    const before = Date.now();
    slow.kill();
    const killed = await slow.done;
    expect(killed.code).not.toBe(0);
    expect(Date.now() - before).toBeLessThan(10_000);
    await expect(host.exec({ target: "nope", command: "true" }, { output() {}, exit() {} })).rejects.toThrow(
      "Service not found: nope",
    );
  });

  it("kill-then-download: the old containers go before the pull, which reports its progress", async () => {
    const third = randomCommit();
    const image = `${inject("registry")}/flotilla-test/busybox:base`;
    await docker
      .getImage(image)
      .remove()
      .catch(() => {});
    const since = Math.floor(Date.now() / 1000) - 1;
    const old = Object.values(await containers()).map((c) => c.Id);
    reports.length = 0;
    host.targetChanged(
      release(third, 3, image, { MODE: "four" }, { "io.balena.update.strategy": "kill-then-download" }),
      runtime,
    );
    await runningRelease(third);
    const downloading = reports.filter((report) => report.update_status === "downloading");
    expect(downloading.length).toBeGreaterThan(0);
    expect(downloading[0]?.apps?.[appUuid]?.releases[third]?.services.web).toMatchObject({ status: "Downloading" });
    expect(downloading.every((report) => typeof report.download_progress === "number")).toBe(true);
    // The engine's own record: both old containers removed before the image was pulled.
    const events = await docker.getEvents({ since, until: Math.ceil(Date.now() / 1000) + 1 });
    const text = await new Promise<string>((resolve) => {
      let all = "";
      events.on("data", (chunk: Buffer) => {
        all += chunk.toString();
      });
      events.on("end", () => resolve(all));
    });
    const order = text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { Type: string; Action: string; id?: string; Actor?: { ID: string } });
    const pulled = order.findIndex((event) => event.Type === "image" && event.Action === "pull");
    const removed = old.map((id) =>
      order.findIndex((event) => event.Type === "container" && event.Action === "remove" && event.Actor?.ID === id),
    );
    expect(pulled).toBeGreaterThan(-1);
    for (const index of removed) {
      expect(index).toBeGreaterThan(-1);
      expect(index).toBeLessThan(pulled);
    }
  });

  it("restart restarts every container; purge empties the named volumes and starts the release again", async () => {
    const before = await containers();
    const startedAt = (await docker.getContainer(before.worker?.Id as string).inspect()).State.StartedAt;
    expect(await host.handle("restart", {}, runtime)).toEqual({ status: 200, body: { Data: "OK", Error: null } });
    expect((await docker.getContainer(before.worker?.Id as string).inspect()).State.StartedAt).not.toBe(startedAt);
    expect(await exec("web", ["/bin/touch", "/data/kept"])).toBe(0);
    expect(await exec("web", ["/bin/test", "-f", "/data/kept"])).toBe(0);
    expect((await host.handle("purge", {}, runtime)).status).toBe(200);
    const after = await containers();
    expect(after.web?.Id).not.toBe(before.web?.Id);
    expect(after.web?.State).toBe("running");
    expect(await exec("web", ["/bin/test", "-f", "/data/kept"])).toBe(1);
  });
});

describe("an image the registry does not have", () => {
  it("aborts the update with the engine's reason in the device log, and tries again later", async () => {
    const logged: EngineLog[] = [];
    const statuses: string[] = [];
    const otherApp = testAppUuid();
    const runner: AppRunner = new AppRunner({
      docker,
      deviceUuid: "d".repeat(32),
      lockRoot,
      log: (line) => logged.push(line),
      changed: () => statuses.push(String(runner.report().update_status)),
      retryMs: 200,
    });
    try {
      const missing = `${inject("registry")}/flotilla-test/missing:1`;
      runner.setTarget(
        targetState(otherApp, {
          commit: randomCommit(),
          id: 1,
          services: { main: { id: 1, image_id: 1, image: missing } },
        }),
      );
      const failures = await eventually(() => {
        const lines = logged.filter((line) => line.message.startsWith("Failed to apply the release:"));
        return lines.length >= 2 ? lines : null;
      }, 20_000);
      expect(failures[0]?.message).toMatch(/missing/);
      expect(statuses).toContain("aborted");
      expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL.appUuid}=${otherApp}`] } })).toEqual(
        [],
      );
    } finally {
      runner.close();
    }
  });
});
