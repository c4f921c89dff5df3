import crypto from "node:crypto";
import Docker from "dockerode";
import { inject } from "vitest";
import type { DeviceRuntime } from "../src/device.ts";
import type { TargetService, TargetState } from "../src/protocol/target-state.ts";
import { LABEL } from "../src/real/engine/service.ts";

export { freePort, TEST_IMAGE } from "./containers-setup.ts";

declare module "vitest" {
  export interface ProvidedContext {
    dockerSocket: string;
    /** host:port of the test registry, which holds TEST_IMAGE as flotilla-test/busybox:base. */
    registry: string;
    /** What this run's test fleet uuids start with (containers-setup.ts). */
    testAppPrefix: string;
  }
}

/** podman's Docker Engine API of this test run (containers-setup.ts). */
export const engine = () => new Docker({ socketPath: inject("dockerSocket") });

/** A fleet uuid (32 hex) the global teardown of this run recognises. */
export const testAppUuid = () => `${inject("testAppPrefix")}${crypto.randomBytes(10).toString("hex")}`;
export const randomCommit = () => crypto.randomBytes(16).toString("hex");

/** Removes what a test fleet left on the engine: its containers, these images and its networks. */
export async function removeTestApp(docker: Docker, appUuid: string, images: string[]) {
  const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.appUuid}=${appUuid}`] } });
  for (const container of left) await docker.getContainer(container.Id).remove({ force: true });
  for (const image of images)
    await docker
      .getImage(image)
      .remove()
      .catch(() => {});
  for (const network of await docker.listNetworks()) {
    if (network.Name.startsWith(appUuid)) await docker.getNetwork(network.Id).remove();
  }
}

/** A target state of one app and release, as the API sends it. */
export function targetState(
  appUuid: string,
  release: { commit: string; id: number; services: Record<string, TargetService> },
): TargetState {
  return {
    name: "test-device",
    config: {},
    apps: {
      [appUuid]: {
        id: 1,
        name: "fleet",
        class: "fleet",
        releases: { [release.commit]: { id: release.id, services: release.services } },
      },
    },
  };
}

/** The parts of DeviceRuntime a host uses, recording what it logs. */
export function recordingRuntime(onReport: () => void = () => {}) {
  const lines: { message: string; serviceId?: number; isSystem?: boolean }[] = [];
  const runtime = {
    log: (line: { message: string; serviceId?: number; isSystem?: boolean }) => lines.push(line),
    reportNow: onReport,
    pollNow: () => {},
  };
  return { runtime: runtime as unknown as DeviceRuntime, lines };
}
