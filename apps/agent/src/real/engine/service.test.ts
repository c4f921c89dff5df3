import { describe, expect, it } from "vitest";
import { credentialsFor, registryOf } from "./apply.ts";
import { serviceSpec, splitCommand, startOrder } from "./service.ts";

const context = {
  appId: 7,
  appUuid: "a".repeat(32),
  appName: "fleet",
  commit: "c".repeat(32),
  releaseId: 3,
  deviceUuid: "d".repeat(32),
  lockDir: "/tmp/locks/web",
};

describe("a service as a container", () => {
  it("applies compose settings, the merged environment over the compose file's, and bookkeeping labels", () => {
    const spec = serviceSpec(
      "web",
      {
        id: 5,
        image_id: 9,
        image: "registry.example.com/v2/abc@sha256:1234",
        environment: { A: "target" },
        labels: { "io.balena.features.dbus": "1" },
        composition: {
          environment: ["A=compose", "B=compose"],
          ports: ["8080:80", "127.0.0.1:53:53/udp", "9000"],
          volumes: ["data:/data:ro", "/etc:/host-etc"],
          command: 'sh -c "echo hi there"',
          restart: "on-failure:3",
          privileged: true,
        },
      },
      context,
    );
    expect(spec.create.Env).toEqual(expect.arrayContaining(["A=target", "B=compose", "BALENA_SERVICE_NAME=web"]));
    expect(spec.create.Cmd).toEqual(["sh", "-c", "echo hi there"]);
    expect(spec.create.HostConfig?.PortBindings).toEqual({
      "80/tcp": [{ HostPort: "8080" }],
      "53/udp": [{ HostIp: "127.0.0.1", HostPort: "53" }],
    });
    expect(Object.keys(spec.create.ExposedPorts ?? {}).sort()).toEqual(["53/udp", "80/tcp", "9000/tcp"]);
    expect(spec.create.HostConfig?.Binds).toEqual([
      "/tmp/locks/web:/tmp/balena",
      "/tmp/locks/web:/tmp/resin",
      `${"a".repeat(32)}_data:/data:ro`,
    ]);
    expect(spec.create.HostConfig?.RestartPolicy).toEqual({ Name: "on-failure", MaximumRetryCount: 3 });
    expect(spec.create.HostConfig?.NetworkMode).toBe(`${"a".repeat(32)}_default`);
    expect(spec.create.Labels).toMatchObject({
      "io.balena.features.dbus": "1",
      "io.balena.app-id": "7",
      "io.balena.service-name": "web",
      "io.balena.image-id": "9",
      "io.balena.release-commit": "c".repeat(32),
      "io.balena.flotilla.config-hash": spec.hash,
    });
    expect(spec.problems).toEqual([
      'compose key "privileged" is not supported by this agent and was not applied',
      'volume "/etc:/host-etc" is not a named volume and was not mounted',
    ]);
  });

  it("the hash changes with the environment and only then", () => {
    const base = { image: "x", environment: { A: "1" } };
    expect(serviceSpec("s", base, context).hash).toBe(serviceSpec("s", { ...base }, context).hash);
    expect(serviceSpec("s", { ...base, environment: { A: "2" } }, context).hash).not.toBe(
      serviceSpec("s", base, context).hash,
    );
  });

  it("orders services after those they depend on; splits quoted commands; names registries", () => {
    const a = serviceSpec("a", { image: "x", composition: { depends_on: ["b"] } }, context);
    const b = serviceSpec("b", { image: "x" }, context);
    expect(startOrder([a, b]).map((spec) => spec.name)).toEqual(["b", "a"]);
    expect(splitCommand('a \'b c\' "d \\"e\\""')).toEqual(["a", "b c", 'd "e"']);
    expect(registryOf("registry.example.com/a/b:1")).toBe("registry.example.com");
    expect(registryOf("127.0.0.1:5000/a")).toBe("127.0.0.1:5000");
    expect(registryOf("library/busybox")).toBeNull();
    expect(registryOf("busybox")).toBeNull();
  });

  it("sends the device's registry credentials only with images of that registry (host:port, any case)", () => {
    const auth = { registry: "registry.example.com", username: "d_1", password: "device-key" };
    const sent = { username: "d_1", password: "device-key", serveraddress: "Registry.Example.com" };
    expect(credentialsFor("Registry.Example.com/v2/abc@sha256:1", auth)).toEqual(sent);
    for (const image of [
      "busybox",
      "library/busybox:1",
      "docker.io/library/busybox",
      "ghcr.io/acme/app:1",
      "registry.example.com:5000/a",
      "registry.example.com.evil.io/a",
    ]) {
      expect(credentialsFor(image, auth), image).toBeUndefined();
    }
    const local = { ...auth, registry: "127.0.0.1:5055" };
    expect(credentialsFor("127.0.0.1:5055/a", local)).toMatchObject({ serveraddress: "127.0.0.1:5055" });
    expect(credentialsFor("127.0.0.1/a", local)).toBeUndefined();
    // No registry known: nobody gets them.
    expect(credentialsFor("registry.example.com/a", undefined)).toBeUndefined();
  });
});
