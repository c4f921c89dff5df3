import fs from "node:fs";
import { gzipSync } from "node:zlib";
import { RELEASE_TEXTS } from "@flotilla/domain";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGISTRY_TOKEN_ISSUER } from "../src/features/registry/tokens.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";
import { publishBusybox, startPodman, type TestPodman } from "./support/podman.ts";
import { freePort, registryClient, startRegistry, type TestRegistry } from "./support/registry.ts";

/**
 * The image builder against real parts: podman's Docker Engine API builds `build:` services and
 * copies `image:` services (FLOTILLA_REGISTRY_MIRROR=1) from an upstream registry into the
 * release registry (CNCF distribution, token auth answered by this API).
 */

let t: TestApp;
let registry: TestRegistry;
let upstream: TestRegistry;
let engine: TestPodman;
let token: string;
let fleetId: number;
let device: TestDevice;
const UPSTREAM_IMAGE = "flotilla-test/busybox:upstream";

type Event = { type: string; message?: string; service?: string; status?: string; id?: number };

/** A project archive: text files, and busybox as an executable the Dockerfiles copy. */
async function project(files: Record<string, string>, executables: string[] = []): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, text] of Object.entries(files)) pack.entry({ name }, text);
  for (const name of executables) pack.entry({ name, mode: 0o755 }, fs.readFileSync("/bin/busybox"));
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

async function push(archive: Buffer) {
  const response = await fetch(`${t.url}/v3/build?app=${fleetId}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/x-tar" },
    body: new Uint8Array(archive),
  });
  expect(response.status).toBe(200);
  const events = (await response.text())
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Event);
  const log = events.filter((event) => event.type === "log").map((event) => event.message ?? "");
  return { events, log, final: events.at(-1) as Event };
}

const images = async (release: number) =>
  (
    await t.db.query<{
      service_name: string;
      location: string;
      content_hash: string | null;
      image_size: string | null;
      status: string;
    }>(
      `SELECT s.service_name, i.is_stored_at__image_location AS location, i.content_hash, i.image_size, i.status
         FROM "release_image" ri JOIN "image" i ON i.id = ri.image JOIN "service" s ON s.id = i.is_a_build_of__service
        WHERE ri.is_part_of__release = $1 ORDER BY s.service_name`,
      [release],
    )
  ).rows;

const BUSYBOX_DOCKERFILE = `FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
ARG GREETING=hello
RUN echo "greeting is $GREETING" && mkdir -p /www && echo "$GREETING" > /www/index.html
CMD ["/bin/httpd", "-f", "-p", "8000", "-h", "/www"]
`;

beforeAll(async () => {
  const [registryPort, upstreamPort] = [await freePort(), await freePort()];
  const registryHost = `127.0.0.1:${registryPort}`;
  upstream = await startRegistry({ port: upstreamPort });
  engine = await startPodman([registryHost, upstream.host]);
  t = await createTestApp({
    FLOTILLA_REGISTRY_URL: `http://${registryHost}`,
    FLOTILLA_BUILDER: `unix://${engine.socket}`,
    FLOTILLA_REGISTRY_MIRROR: "1",
  });
  const certificatePem = await (await fetch(`${t.url}/auth/v1/registry-cert`)).text();
  registry = await startRegistry({
    port: registryPort,
    token: { realm: `${t.url}/auth/v1/token`, issuer: REGISTRY_TOKEN_ISSUER, certificatePem },
  });
  await publishBusybox(engine, `${upstream.host}/${UPSTREAM_IMAGE}`, BUSYBOX_DOCKERFILE);

  const owner = await t.factories.user();
  token = owner.token;
  const org = await t.factories.organization({ admins: [owner.user] });
  const fleet = await t.factories.fleet(org);
  fleetId = fleet.id;
  device = await registerDevice(t, await provisioningKeyFor(t, token, fleet.id), fleet);
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await upstream?.stop();
  await engine?.stop();
  await t?.close();
});

describe("the image builder (FLOTILLA_BUILDER) and the registry", () => {
  it("builds a build: service with its build args, mirrors an image: service, and records digests and sizes", async () => {
    const archive = await project(
      {
        "docker-compose.yml": `services:
  web:
    build:
      context: ./web
      args: { GREETING: bonjour }
    ports: ["8000"]
  cache:
    image: ${upstream.host}/${UPSTREAM_IMAGE}
`,
        "web/Dockerfile": BUSYBOX_DOCKERFILE,
        "README.md": "not in any build context",
      },
      ["web/busybox"],
    );
    const { log, final } = await push(archive);
    expect(final).toMatchObject({ type: "status", status: "success" });
    // The engine's own lines, per service, with the step progress and the RUN output.
    expect(log).toContain("[web] STEP 1/6: FROM scratch");
    expect(log).toContain("[web] greeting is bonjour");
    expect(
      log.some((line) => /^\[cache\] Copying image 127\.0\.0\.1:\d+\/flotilla-test\/busybox:upstream/.test(line)),
    ).toBe(true);
    expect(log.filter((line) => /^\[(web|cache)\] Image sha256:[0-9a-f]{64} pushed \(\d/.test(line))).toHaveLength(2);

    const rows = await images(final.id as number);
    expect(rows.map((row) => row.status)).toEqual(["success", "success"]);
    for (const row of rows) {
      expect(row.location).toMatch(new RegExp(`^${registry.host.replace(/\./g, "\\.")}/v2/[0-9a-f]{32}$`));
      expect(row.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      // busybox alone is about 2 MB.
      expect(Number(row.image_size)).toBeGreaterThan(1_000_000);
    }

    // The device's target state names each image by its digest, and the registry serves it to the device.
    const state = await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key);
    const services = Object.values(
      (
        state.json[device.uuid] as {
          apps: Record<string, { releases: Record<string, { services: Record<string, { image: string }> }> }>;
        }
      ).apps,
    )[0]?.releases;
    const named = Object.values(services ?? {})[0]?.services ?? {};
    for (const row of rows) expect(named[row.service_name]?.image).toBe(`${row.location}@${row.content_hash}`);
    const asDevice = registryClient(registry.url, { username: `d_${device.uuid}`, password: device.key });
    const [web] = rows;
    const manifest = await asDevice(
      `/v2/${web?.location.slice(registry.host.length + 1)}/manifests/${web?.content_hash}`,
      {
        headers: {
          accept: "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json",
        },
      },
    );
    expect(manifest.status).toBe(200);
    // The builder keeps no tag of what it pushed.
    await expect(engine.podman("image", "exists", `${web?.location}:latest`)).rejects.toThrow();
  });

  it("fails the release with the builder's error when a build step fails, and names a missing image", async () => {
    const failing = await push(await project({ Dockerfile: "FROM scratch\nCOPY missing-file /x\n" }));
    expect(failing.final).toMatchObject({ status: "failed" });
    const error = failing.log.find((line) => line.startsWith("[main] error: "));
    expect(error).toMatch(/missing-file/);
    expect(failing.log.at(-1)).toBe(RELEASE_TEXTS.build_failed);
    expect((await images(failing.final.id as number))[0]).toMatchObject({ status: "failed", content_hash: null });

    const missing = await push(
      await project({
        "docker-compose.yml": `services:\n  gone:\n    image: ${upstream.host}/flotilla-test/nothing:here\n`,
      }),
    );
    expect(missing.final).toMatchObject({ status: "failed" });
    expect(missing.log.find((line) => line.startsWith("[gone] error: "))).toMatch(/nothing/);
  });

  it("gives a builder credential push access to its own repository only", async () => {
    const { signBuilderCredential } = await import("../src/features/registry/tokens.ts");
    const { loadRegistryKeys } = await import("../src/features/registry/keys.ts");
    const keys = loadRegistryKeys(t.ctx.config);
    const credential = await signBuilderCredential(keys, "v2/0123456789abcdef0123456789abcdef");
    const ask = async (scope: string, password: string) => {
      const response = await fetch(`${t.url}/auth/v1/token?service=${registry.host}&scope=${scope}`, {
        headers: { authorization: `Basic ${Buffer.from(`flotilla-builder:${password}`).toString("base64")}` },
      });
      return { status: response.status, body: (await response.json()) as { token?: string } };
    };
    const own = await ask("repository:v2/0123456789abcdef0123456789abcdef:push,pull", credential);
    const claims = JSON.parse(Buffer.from(own.body.token?.split(".")[1] ?? "", "base64url").toString());
    expect(claims.access).toEqual([
      { type: "repository", name: "v2/0123456789abcdef0123456789abcdef", actions: ["push", "pull"] },
    ]);
    const other = await ask("repository:v2/ffffffffffffffffffffffffffffffff:push,pull", credential);
    expect(JSON.parse(Buffer.from(other.body.token?.split(".")[1] ?? "", "base64url").toString()).access).toEqual([]);
    // A device key or a forged string is no builder credential.
    expect((await ask("repository:v2/0123456789abcdef0123456789abcdef:push", device.key)).status).toBe(401);
  });
});
