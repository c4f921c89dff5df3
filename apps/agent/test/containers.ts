import crypto from "node:crypto";
import net from "node:net";
import Docker from "dockerode";
import { inject } from "vitest";
import type { DeviceRuntime } from "../src/device.ts";
import type { TargetService, TargetState } from "../src/protocol/target-state.ts";

export { TEST_IMAGE } from "./containers-setup.ts";

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

/** A port nothing listens on now (for publishing a container port on 127.0.0.1). */
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
