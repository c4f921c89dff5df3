import crypto from "node:crypto";
import zlib from "node:zlib";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGISTRY_TOKEN_ISSUER } from "../src/features/registry/tokens.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { freePort, startRegistry, type TestRegistry } from "./support/registry.ts";

/**
 * `balena deploy` (issue #22): the /v7 calls balena-cli makes through @balena/compose's release
 * module (balena-release before it), in its order and shapes, then the registry token it asks
 * for and a real push of an image to the registry with that token.
 */
let t: TestApp;
let registry: TestRegistry;
let sdk: BalenaSDK;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: { id: number; uuid: string };
let observerToken: string;

const sha256 = (data: Buffer) => `sha256:${crypto.createHash("sha256").update(data).digest("hex")}`;
const MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json";

/** Pushes a one-layer image with a registry token as docker does with `registrytoken`; returns the digest. */
async function pushWithToken(name: string, token: string) {
  const auth = { authorization: `Bearer ${token}` };
  const tar = Buffer.alloc(1024);
  const layer = zlib.gzipSync(tar);
  const config = Buffer.from(
    JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [sha256(tar)] } }),
  );
  for (const blob of [layer, config]) {
    const started = await fetch(`${registry.url}/v2/${name}/blobs/uploads/`, { method: "POST", headers: auth });
    if (started.status !== 202) return { status: started.status };
    const upload = new URL(started.headers.get("location") ?? "", registry.url);
    upload.searchParams.set("digest", sha256(blob));
    const put = await fetch(upload, {
      method: "PUT",
      body: blob,
      headers: { ...auth, "content-type": "application/octet-stream" },
    });
    if (put.status !== 201) return { status: put.status };
  }
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_TYPE,
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha256(config), size: config.length },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: sha256(layer), size: layer.length }],
    }),
  );
  const put = await fetch(`${registry.url}/v2/${name}/manifests/latest`, {
    method: "PUT",
    body: manifest,
    headers: { ...auth, "content-type": MANIFEST_TYPE },
  });
  return { status: put.status, digest: put.headers.get("docker-content-digest") ?? "" };
}

const COMPOSITION = {
  version: "2.1",
  services: {
    main: { build: { context: "." }, labels: { "io.balena.features.dbus": "1" }, environment: { MODE: "prod" } },
  },
};

/** What @balena/compose's `release.create` sends, one call after another (balena-cli deploy). */
async function createDeployRelease(options: { isFinal: boolean; semver?: string; contract?: unknown }) {
  const pine = sdk.pine;
  const { id: userId } = await sdk.auth.getUserInfo();
  await pine.get({ resource: "user", id: userId });
  await pine.get({ resource: "application", id: fleet.id });
  const release = (await pine.post({
    resource: "release",
    body: {
      is_created_by__user: userId,
      belongs_to__application: fleet.id,
      composition: COMPOSITION,
      commit: crypto.randomBytes(16).toString("hex"),
      status: "running",
      source: "local",
      start_timestamp: new Date(),
      is_final: options.isFinal,
      contract: options.contract,
      ...(options.semver ? { semver: options.semver } : {}),
    },
  } as never)) as { id: number; semver: string; is_final: boolean; status: string };
  const images: Record<string, { id: number; is_stored_at__image_location: string }> = {};
  for (const [serviceName, description] of Object.entries(COMPOSITION.services)) {
    let service: { id: number };
    try {
      service = (await pine.post({
        resource: "service",
        body: { application: fleet.id, service_name: serviceName },
      } as never)) as { id: number };
    } catch (error) {
      // pinejs-client's getOrCreate: a 409 whose text says "unique" means it exists.
      expect((error as { statusCode?: number }).statusCode).toBe(409);
      expect(String((error as Error).message)).toMatch(/unique/i);
      const found = (await pine.get({
        resource: "service",
        options: { $filter: { application: fleet.id, service_name: serviceName } },
      } as never)) as { id: number }[];
      service = found[0] as { id: number };
    }
    const image = (await pine.post({
      resource: "image",
      body: { is_a_build_of__service: service.id, status: "running", start_timestamp: new Date() },
    } as never)) as { id: number; is_stored_at__image_location: string };
    const releaseImage = (await pine.post({
      resource: "image__is_part_of__release",
      body: { is_part_of__release: release.id, image: image.id },
    } as never)) as { id: number };
    for (const [name, value] of Object.entries(description.labels)) {
      await pine.post({
        resource: "image_label",
        body: { release_image: releaseImage.id, label_name: name, value },
      } as never);
    }
    for (const [name, value] of Object.entries(description.environment)) {
      await pine.post({
        resource: "image_environment_variable",
        body: { release_image: releaseImage.id, name, value },
      } as never);
    }
    images[serviceName] = image;
  }
  return { release, images };
}

/** balena-cli's `authorizePush`: the SDK's request to the API's token endpoint. */
async function authorizePush(repositories: string[]) {
  const { body } = await sdk.request.send({
    baseUrl: t.url,
    url: "/auth/v1/token",
    qs: { service: registry.host, scope: repositories.map((repo) => `repository:${repo}:pull,push`) },
  });
  return (body as { token: string }).token;
}

beforeAll(async () => {
  const port = await freePort();
  t = await createTestApp({ FLOTILLA_REGISTRY_URL: `http://127.0.0.1:${port}` });
  const certificatePem = await (await fetch(`${t.url}/auth/v1/registry-cert`)).text();
  registry = await startRegistry({
    port,
    token: { realm: `${t.url}/auth/v1/token`, issuer: REGISTRY_TOKEN_ISSUER, certificatePem },
  });
  await t.factories.user({ email: "deployer@example.com", password: "deployer-password" });
  const me = (await t.db.query<{ id: number }>(`SELECT id FROM "user" WHERE email = 'deployer@example.com'`)).rows[0];
  const org = await t.factories.organization({ name: "DeployCo", admins: [{ id: Number(me?.id) } as never] });
  fleet = await t.factories.fleet(org, { name: "deployfleet" });
  device = await t.factories.device(fleet, { name: "edge" });
  const observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, fleet, "observer");
  observerToken = observer.token;
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "deployer@example.com", password: "deployer-password" });
});
afterAll(async () => {
  await t?.close();
  await registry?.stop();
});

describe("balena deploy through /v7", () => {
  it("creates the release and images as balena-cli does, pushes with the registry token, and rolls out", async () => {
    const contract = JSON.stringify({ name: "deployed", type: "sw.application", version: "2.3.4" });
    const { release, images } = await createDeployRelease({ isFinal: true, semver: "2.3.4", contract });
    expect(release).toMatchObject({ status: "running", is_final: true, semver: "2.3.4" });
    const image = images.main;
    expect(image?.is_stored_at__image_location).toMatch(new RegExp(`^${registry.host}/v2/[0-9a-f]{32}$`));
    const repository = image?.is_stored_at__image_location.slice(registry.host.length + 1) ?? "";

    // The token grants pull and push on the new repository to its creator, nothing to an observer.
    const token = await authorizePush([repository]);
    expect(decodeJwt(token).access).toEqual([{ type: "repository", name: repository, actions: ["pull", "push"] }]);
    const observerAnswer = await fetch(
      `${t.url}/auth/v1/token?service=${registry.host}&scope=repository:${repository}:pull,push`,
      { headers: { authorization: `Bearer ${observerToken}` } },
    );
    expect(decodeJwt(((await observerAnswer.json()) as { token: string }).token).access).toEqual([
      { type: "repository", name: repository, actions: ["pull"] },
    ]);
    const pushed = await pushWithToken(repository, token);
    expect(pushed.status).toBe(201);

    // balena-cli saves the image's details, then the release's outcome.
    await sdk.pine.patch({
      resource: "image",
      id: image?.id,
      body: {
        end_timestamp: new Date().toISOString(),
        project_type: "Standard Dockerfile",
        build_log: "Step 1/1 : FROM scratch",
        push_timestamp: new Date().toISOString(),
        status: "success",
        content_hash: pushed.digest,
        dockerfile: "FROM scratch",
        image_size: "1234",
      },
    } as never);
    await sdk.pine.patch({
      resource: "release",
      id: release.id,
      body: { status: "success", end_timestamp: new Date().toISOString() },
    } as never);

    const stored = await sdk.models.release.get(release.id, {
      $select: ["status", "is_final", "raw_version", "source", "contract", "semver_major", "is_finalized_at__date"],
      $expand: { is_created_by__user: { $select: "username" }, release_image: { $expand: { image: {} } } },
    });
    expect(stored).toMatchObject({
      status: "success",
      is_final: true,
      raw_version: "2.3.4",
      source: "local",
      contract: { name: "deployed", version: "2.3.4" },
      semver_major: 2,
    });
    expect(stored.is_finalized_at__date).not.toBeNull();
    const storedImage = (stored.release_image as { image: Record<string, unknown>[] }[])[0]?.image[0];
    expect(storedImage).toMatchObject({ status: "success", content_hash: pushed.digest, image_size: 1234 });
    // The fleet tracks the latest release: it moves, and the device's target state names the digest.
    const target = await fetch(`${t.url}/v7/application(${fleet.id})?$select=should_be_running__release`, {
      headers: { authorization: `Bearer ${await sdk.auth.getToken()}` },
    });
    expect(((await target.json()) as { d: { should_be_running__release: { __id: number } }[] }).d[0]).toEqual({
      should_be_running__release: { __id: release.id },
    });
    const labels = await sdk.pine.get({
      resource: "image_label",
      options: { $filter: { release_image: { $any: { $alias: "ri", $expr: { ri: { image: image?.id } } } } } },
    } as never);
    expect(labels).toMatchObject([{ label_name: "io.balena.features.dbus", value: "1" }]);
    // The device's target state names the pushed image by its digest.
    const state = JSON.stringify(await sdk.models.device.getSupervisorTargetState(device.uuid));
    expect(state).toContain(`${image?.is_stored_at__image_location}@${pushed.digest}`);
  });

  it("a draft deploy stays out of the rollout until finalized; a second deploy reuses the service", async () => {
    const before = (
      await t.db.query<{ r: number }>(`SELECT should_be_running__release r FROM application WHERE id = $1`, [fleet.id])
    ).rows[0]?.r;
    const { release, images } = await createDeployRelease({ isFinal: false, contract: { name: "draft" } });
    await sdk.pine.patch({ resource: "image", id: images.main?.id, body: { status: "success" } } as never);
    await sdk.pine.patch({ resource: "release", id: release.id, body: { status: "success" } } as never);
    const fleetRelease = async () =>
      (
        await t.db.query<{ r: number }>(`SELECT should_be_running__release r FROM application WHERE id = $1`, [
          fleet.id,
        ])
      ).rows[0]?.r;
    expect(await fleetRelease()).toBe(before);
    await sdk.models.release.finalize(release.id);
    expect(await fleetRelease()).toBe(release.id);
    const services = await t.db.query(`SELECT id FROM service WHERE application = $1`, [fleet.id]);
    expect(services.rows).toHaveLength(1);
  });

  it("refuses what balena refuses, with a clear text, and writes nothing", async () => {
    const { id: userId } = await sdk.auth.getUserInfo();
    const bearer = await sdk.auth.getToken();
    const post = (body: Record<string, unknown>) =>
      fetch(`${t.url}/v7/release`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
        body: JSON.stringify({
          belongs_to__application: fleet.id,
          commit: crypto.randomBytes(16).toString("hex"),
          status: "running",
          source: "local",
          composition: COMPOSITION,
          ...body,
        }),
      });
    const count = async () => Number((await t.db.query<{ n: number }>(`SELECT count(*) n FROM release`)).rows[0]?.n);
    const n = await count();
    const badSemver = await post({ semver: "v1" });
    expect(badSemver.status).toBe(400);
    expect(await badSemver.text()).toContain("semver must be a version like 1.2.3");
    const badContract = await post({ contract: "{not json" });
    expect(badContract.status).toBe(400);
    expect(await badContract.text()).toContain("contract must be a JSON object");
    const other = await post({ is_created_by__user: userId + 1000 });
    expect([400, 401]).toContain(other.status);
    expect(await count()).toBe(n);
    const made = await post({ semver: "1.0.0-rc.1+b7" });
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({
      raw_version: "1.0.0-rc.1+b7",
      semver_prerelease: "rc.1",
      semver_build: "b7",
      is_created_by__user: { __id: userId },
    });
    // The image location is the server's to choose.
    const service = (await t.db.query<{ id: number }>(`SELECT id FROM service WHERE application = $1`, [fleet.id]))
      .rows[0];
    const image = (await sdk.pine.post({
      resource: "image",
      body: { is_a_build_of__service: service?.id, status: "running", is_stored_at__image_location: "evil.example/x" },
    } as never)) as { id: number; is_stored_at__image_location: string };
    expect(image.is_stored_at__image_location.startsWith(`${registry.host}/v2/`)).toBe(true);
    await expect(
      sdk.pine.patch({
        resource: "image",
        id: image.id,
        body: { is_stored_at__image_location: "evil.example/x" },
      } as never),
    ).rejects.toThrow(/chosen by the server/);
  });
});
