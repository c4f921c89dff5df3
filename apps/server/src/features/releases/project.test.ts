import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { tarOf } from "../../../test/support/tar.ts";
import { ProjectError, parseProject, readProject } from "./project.ts";

const filesOf = (files: Record<string, string>) => new Map(Object.entries(files));

describe("reading a pushed project", () => {
  it("keeps the compose file, balena.yml and Dockerfiles of a plain or gzipped tar, and skips the rest", async () => {
    const archive = await tarOf({
      "docker-compose.yml": "services: {}",
      "./api/Dockerfile": "FROM node:22",
      "src/index.js": "console.log(1)",
      "balena.yml": "version: 1.0.0",
    });
    for (const bytes of [archive, gzipSync(archive)]) {
      const { files } = await readProject(Readable.from([bytes]));
      expect([...files.keys()].sort()).toEqual(["api/Dockerfile", "balena.yml", "docker-compose.yml"]);
    }
  });

  it("flattens a single top directory (repository tarballs)", async () => {
    const archive = gzipSync(await tarOf({ "repo-main/docker-compose.yml": "services: {}", "repo-main/x.txt": "" }));
    const { files, stripTop } = await readProject(Readable.from([archive]), { flatten: true });
    expect([...files.keys()]).toEqual(["docker-compose.yml"]);
    expect(stripTop).toBe(true);
  });

  it("stops a gzip bomb at the unpacked bound with 413, however small the archive", async () => {
    // 2 MiB of one file compresses to a few KiB; the bound here is 1 MiB.
    const bomb = gzipSync(
      await tarOf({ "docker-compose.yml": "services: {}", "big.bin": "\0".repeat(2 * 1024 * 1024) }),
    );
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expect(readProject(Readable.from([bomb]), { maxUnpackedBytes: 1024 * 1024 })).rejects.toMatchObject({
      code: "payload_too_large",
      statusCode: 413,
    });
    // Within the bound it reads as before.
    const { files } = await readProject(Readable.from([bomb]), { maxUnpackedBytes: 4 * 1024 * 1024 });
    expect([...files.keys()]).toEqual(["docker-compose.yml"]);
  });

  it("refuses what is not a tar archive", async () => {
    await expect(readProject(Readable.from([Buffer.from("{ not: 'a tar' }".repeat(40))]))).rejects.toBeInstanceOf(
      ProjectError,
    );
    await expect(readProject(Readable.from([]))).rejects.toThrow("the archive is empty");
  });
});

describe("the composition of a project", () => {
  it("reads services with prebuilt images, builds, labels and environment in both compose forms", () => {
    const project = parseProject(
      filesOf({
        "docker-compose.yml": [
          "version: '2.1'",
          "services:",
          "  web:",
          "    image: nginx:1.27-alpine",
          "    labels: ['io.balena.features.dbus=1', 'plain']",
          "    environment: { MODE: eco, PORT: 80 }",
          "  api:",
          "    build: { context: ./api, dockerfile: Dockerfile.prod, args: [VERSION=2] }",
          "    environment: ['DEBUG=0']",
          "volumes: { data: {} }",
        ].join("\n"),
        "api/Dockerfile.prod": "FROM node:22",
      }),
    );
    expect(project.services).toEqual([
      {
        name: "web",
        image: "nginx:1.27-alpine",
        build: undefined,
        labels: { "io.balena.features.dbus": "1", plain: "" },
        environment: { MODE: "eco", PORT: "80" },
      },
      {
        name: "api",
        image: undefined,
        build: { context: "api", dockerfile: "api/Dockerfile.prod", args: { VERSION: "2" } },
        labels: {},
        environment: { DEBUG: "0" },
      },
    ]);
    expect(project.dockerfiles.get("api")).toBe("FROM node:22");
    expect(project.composition).toMatchObject({ volumes: { data: {} } });
  });

  it("makes a single Dockerfile the service main, and reads the version from balena.yml", () => {
    const project = parseProject(filesOf({ Dockerfile: "FROM alpine", "balena.yml": "version: 2.3.4-beta.1" }));
    expect(project.services.map((s) => s.name)).toEqual(["main"]);
    expect(project.version).toEqual({ major: 2, minor: 3, patch: 4, prerelease: "beta.1" });
  });

  it.each([
    [{ "x.txt": "" }, "no docker-compose.yml or Dockerfile at the top of the project"],
    [{ "docker-compose.yml": "services:\n  web:\n    image: [unclosed" }, "docker-compose.yml: "],
    [{ "docker-compose.yml": "- a\n- b" }, 'the file must be a map with "services"'],
    [{ "docker-compose.yml": "services: {}" }, "there are no services"],
    [{ "docker-compose.yml": "services:\n  web: {}" }, 'service "web" needs an image or a build'],
    [{ "docker-compose.yml": "services:\n  'bad name':\n    image: x" }, 'service name "bad name" is not valid'],
    [{ "docker-compose.yml": "services:\n  web:\n    image: x\n    labels: 3" }, "labels must be a map or a list"],
    [{ Dockerfile: "FROM a", "balena.yml": "version: one" }, 'version "one" is not a semantic version'],
  ])("refuses %j with a message naming the problem", (files, message) => {
    expect(() => parseProject(filesOf(files as Record<string, string>))).toThrow(message);
  });
});
