import { execFile } from "node:child_process";
import crypto from "node:crypto";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimRepository, newImageLocation } from "../src/features/registry/access.ts";
import { REGISTRY_TOKEN_ISSUER } from "../src/features/registry/tokens.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";
import { CONTAINERS_CONF, freePort, registryClient, startRegistry, type TestRegistry } from "./support/registry.ts";

/**
 * The registry's token auth against a real CNCF registry (docker-registry, token auth pointing at
 * this API's realm, trusting its certificate) and the client flow docker and podman follow.
 */

const sha256 = (data: Buffer) => `sha256:${crypto.createHash("sha256").update(data).digest("hex")}`;
const MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json";

let t: TestApp;
let registry: TestRegistry;
let repository: string;
let otherRepository: string;
let owner: { token: string; username: string };
let observer: { token: string; username: string };
let stranger: { token: string; username: string };
let deviceA: TestDevice;
let deviceB: TestDevice;
let fleetAId: number;

/** A release of the fleet with one service whose image lives in the registry; returns the repository. */
async function imageInRegistry(fleetId: number): Promise<string> {
  const location = newImageLocation(registry.host);
  const release = await t.factories.release({ id: fleetId });
  await t.db.query(
    `WITH s AS (INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id),
          i AS (INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status, project_type)
                SELECT s.id, $2, 'success', 'Dockerfile' FROM s RETURNING id)
     INSERT INTO "release_image" (image, is_part_of__release) SELECT i.id, $3 FROM i`,
    [fleetId, location, release.id],
  );
  const { rows } = await t.db.query<{ id: number }>(`SELECT id FROM "image" WHERE is_stored_at__image_location = $1`, [
    location,
  ]);
  await claimRepository(t.db, Number(rows[0]?.id));
  return location.slice(registry.host.length + 1);
}

/** Pushes a one-layer image through the registry's blob and manifest API; returns the last status. */
async function pushImage(request: ReturnType<typeof registryClient>, name: string, tag: string): Promise<number> {
  // An empty tar, gzipped: a layer real clients (podman) can unpack.
  const tar = Buffer.alloc(1024);
  const layer = zlib.gzipSync(tar);
  const config = Buffer.from(
    JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [sha256(tar)] } }),
  );
  for (const blob of [layer, config]) {
    const started = await request(`/v2/${name}/blobs/uploads/`, { method: "POST" });
    if (started.status !== 202) return started.status;
    const upload = new URL(started.headers.get("location") ?? "", registry.url);
    upload.searchParams.set("digest", sha256(blob));
    const put = await request(upload.pathname + upload.search, {
      method: "PUT",
      body: blob,
      headers: { "content-type": "application/octet-stream" },
    });
    if (put.status !== 201) return put.status;
  }
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_TYPE,
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha256(config), size: config.length },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: sha256(layer), size: layer.length }],
    }),
  );
  const put = await request(`/v2/${name}/manifests/${tag}`, {
    method: "PUT",
    body: manifest,
    headers: { "content-type": MANIFEST_TYPE },
  });
  return put.status;
}

const pullManifest = (request: ReturnType<typeof registryClient>, name: string, tag: string) =>
  request(`/v2/${name}/manifests/${tag}`, { headers: { accept: MANIFEST_TYPE } });

/** The registry itself refused (the realm gave a token, without the access asked for). */
async function deniedByRegistry(response: Promise<Response>) {
  const answer = await response;
  expect(answer.status).toBe(401);
  expect(answer.url.startsWith(registry.url)).toBe(true);
  expect(answer.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
}

const asUser = (user: { username: string; token: string }) =>
  registryClient(registry.url, { username: user.username, password: user.token });
const asDevice = (device: TestDevice) =>
  registryClient(registry.url, { username: `d_${device.uuid}`, password: device.key });

/** The realm's answer to a token request with these credentials and scopes. */
async function tokenFor(password: string | undefined, scopes: string[], service = registry.host) {
  const url = new URL(`${t.url}/auth/v1/token`);
  url.searchParams.set("service", service);
  for (const scope of scopes) url.searchParams.append("scope", scope);
  const response = await fetch(url, {
    headers: password ? { authorization: `Basic ${Buffer.from(`someone:${password}`).toString("base64")}` } : {},
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  const port = await freePort();
  t = await createTestApp({ FLOTILLA_REGISTRY_URL: `http://127.0.0.1:${port}` });
  const certificatePem = await (await fetch(`${t.url}/auth/v1/registry-cert`)).text();
  registry = await startRegistry({
    port,
    token: { realm: `${t.url}/auth/v1/token`, issuer: REGISTRY_TOKEN_ISSUER, certificatePem },
  });

  const ownerUser = await t.factories.user();
  const observerUser = await t.factories.user();
  const strangerUser = await t.factories.user();
  owner = { token: ownerUser.token, username: ownerUser.user.username };
  observer = { token: observerUser.token, username: observerUser.user.username };
  stranger = { token: strangerUser.token, username: strangerUser.user.username };
  const org = await t.factories.organization({ admins: [ownerUser.user] });
  const fleetA = await t.factories.fleet(org);
  const fleetB = await t.factories.fleet(org);
  fleetAId = fleetA.id;
  await t.factories.fleetMember(observerUser.user, fleetA, "observer");
  await t.factories.organization({ admins: [strangerUser.user] });
  repository = await imageInRegistry(fleetA.id);
  otherRepository = await imageInRegistry(fleetB.id);
  deviceA = await registerDevice(t, await provisioningKeyFor(t, owner.token, fleetA.id), fleetA);
  deviceB = await registerDevice(t, await provisioningKeyFor(t, owner.token, fleetB.id), fleetB);
});

afterAll(async () => {
  await registry?.stop();
  await t?.close();
});

describe("registry token auth with a real registry", () => {
  it("refuses requests without a token (the registry's challenge names this realm)", async () => {
    const response = await fetch(`${registry.url}/v2/${repository}/manifests/latest`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain(`realm="${t.url}/auth/v1/token"`);
  });

  it("lets a user who may push releases push an image of their fleet, and a device of the fleet pull it", async () => {
    expect(await pushImage(asUser(owner), repository, "latest")).toBe(201);
    const pulled = await pullManifest(asDevice(deviceA), repository, "latest");
    expect(pulled.status).toBe(200);
    expect(((await pulled.json()) as { mediaType: string }).mediaType).toBe(MANIFEST_TYPE);
    // Balena devices log in with a session-less API key as Bearer too.
    const bearer = await fetch(`${t.url}/auth/v1/token?scope=repository:${repository}:pull`, {
      headers: { authorization: `Bearer ${deviceA.key}` },
    });
    expect(((await bearer.json()) as { access_token: string }).access_token).toBeTruthy();
  });

  it("refuses a device of another fleet and a stranger: the registry answers 401 to their token", async () => {
    expect(await pushImage(asUser(owner), otherRepository, "v1")).toBe(201);
    await deniedByRegistry(pullManifest(asDevice(deviceB), repository, "latest"));
    await deniedByRegistry(pullManifest(asDevice(deviceA), otherRepository, "v1"));
    await deniedByRegistry(pullManifest(asUser(stranger), repository, "latest"));
    expect(await pushImage(asUser(stranger), repository, "evil")).toBe(401);
    expect((await pullManifest(asDevice(deviceB), otherRepository, "v1")).status).toBe(200);
  });

  it("serves podman's pull with a device's credentials (d_<uuid>, the device key) and refuses another fleet's device", async () => {
    const env = {
      ...process.env,
      CONTAINERS_CONF,
    };
    const image = `${registry.host}/${repository}:latest`;
    const pull = (device: TestDevice) =>
      promisify(execFile)(
        "podman",
        ["pull", "-q", "--tls-verify=false", "--creds", `d_${device.uuid}:${device.key}`, image],
        {
          env,
        },
      );
    try {
      await expect(pull(deviceB)).rejects.toThrow(/unauthorized|denied|authentication required/i);
      const { stdout } = await pull(deviceA);
      expect(stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await promisify(execFile)("podman", ["rmi", "-f", image], { env }).catch(() => {});
    }
  });

  it("lets an observer pull but not push", async () => {
    expect((await pullManifest(asUser(observer), repository, "latest")).status).toBe(200);
    expect(await pushImage(asUser(observer), repository, "observed")).toBe(401);
  });

  it("gives no token for an invalid password or no credentials (401 from the realm)", async () => {
    const bad = registryClient(registry.url, { username: "someone", password: "not-a-key" });
    const refused = await pullManifest(bad, repository, "latest");
    expect(refused.status).toBe(401);
    expect(refused.url).toContain("/auth/v1/token");
    expect((await tokenFor("not-a-key", [`repository:${repository}:pull`])).status).toBe(401);
    expect((await tokenFor(undefined, [`repository:${repository}:pull`])).status).toBe(401);
  });
});

describe("registry token service", () => {
  it("grants per repository only what the caller may have, as an RS256 JWT with its certificate in x5c", async () => {
    const { status, body } = await tokenFor(owner.token, [
      `repository:${repository}:pull,push`,
      `repository:${otherRepository}:pull`,
      "repository:v2/00000000000000000000000000000000:pull",
      "registry:catalog:*",
    ]);
    expect(status).toBe(200);
    expect(body.token).toBe(body.access_token);
    expect(body.expires_in).toBeGreaterThan(60);
    expect(typeof body.issued_at).toBe("string");
    const header = decodeProtectedHeader(String(body.token));
    expect(header.alg).toBe("RS256");
    expect(header.x5c).toHaveLength(1);
    const claims = decodeJwt(String(body.token));
    expect(claims).toMatchObject({ iss: REGISTRY_TOKEN_ISSUER, aud: registry.host, sub: owner.username });
    expect(claims.access).toEqual([
      { type: "repository", name: repository, actions: ["pull", "push"] },
      { type: "repository", name: otherRepository, actions: ["pull"] },
    ]);
    const device = await tokenFor(deviceA.key, [
      `repository:${repository}:pull,push`,
      `repository:${otherRepository}:pull`,
    ]);
    expect(decodeJwt(String(device.body.token)).access).toEqual([
      { type: "repository", name: repository, actions: ["pull"] },
    ]);
    // A personal API key as the password (what `balena login --token` users give docker).
    const created = await fetch(`${t.url}/api-key/user/full`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ name: "registry", expiryDate: null }),
    });
    expect(created.status).toBe(200);
    const apiKey = (await created.json()) as string;
    const byKey = await tokenFor(apiKey, [`repository:${repository}:pull,push`]);
    expect(decodeJwt(String(byKey.body.token)).access).toEqual([
      { type: "repository", name: repository, actions: ["pull", "push"] },
    ]);
    // A provisioning key is no device: nothing.
    const provisioning = await tokenFor(await provisioningKeyFor(t, owner.token, fleetAId), [
      `repository:${repository}:pull`,
    ]);
    expect(decodeJwt(String(provisioning.body.token)).access).toEqual([]);
    const none = await tokenFor(stranger.token, [`repository:${repository}:pull`]);
    expect(none.status).toBe(200);
    expect(decodeJwt(String(none.body.token)).access).toEqual([]);
  });

  it("never hands a repository to another fleet, not even after its owner deleted the release", async () => {
    const ownerOrg = await t.db.query<{ id: number; handle: string }>(
      `SELECT o.id, o.handle FROM "organization" o JOIN "application" a ON a.organization = o.id WHERE a.id = $1`,
      [fleetAId],
    );
    const ownerFleet = await t.factories.fleet(ownerOrg.rows[0] as { id: number; handle: string });
    const name = await imageInRegistry(ownerFleet.id);
    // The stranger's fleet names the same location (an `image:` service may name any location).
    const strangerUser = await t.db.query<{ id: number }>(`SELECT id FROM "user" WHERE username = $1`, [
      stranger.username,
    ]);
    const strangerOrg = await t.db.query<{ id: number; handle: string }>(
      `SELECT o.id, o.handle FROM "organization" o JOIN "organization_membership" m ON m.is_member_of__organization = o.id
        WHERE m."user" = $1`,
      [strangerUser.rows[0]?.id],
    );
    const squatter = await t.factories.fleet(strangerOrg.rows[0] as { id: number; handle: string });
    const release = await t.factories.release(squatter);
    await t.db.query(
      `WITH s AS (INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id),
            i AS (INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status, project_type)
                  SELECT s.id, $2, 'success', 'prebuilt' FROM s RETURNING id)
       INSERT INTO "release_image" (image, is_part_of__release) SELECT i.id, $3 FROM i`,
      [squatter.id, `${registry.host}/${name}`, release.id],
    );
    const grants = async (password: string) =>
      decodeJwt(String((await tokenFor(password, [`repository:${name}:pull,push`])).body.token)).access;
    expect(await grants(stranger.token)).toEqual([]);
    // The owner deletes the release and its image: the repository stays theirs, named for no one else.
    await t.db.query(
      `DELETE FROM "image" WHERE is_stored_at__image_location = $1
          AND is_a_build_of__service IN (SELECT id FROM "service" WHERE application = $2)`,
      [`${registry.host}/${name}`, ownerFleet.id],
    );
    expect(await grants(stranger.token)).toEqual([]);
    expect(await grants(owner.token)).toEqual([{ type: "repository", name, actions: ["pull", "push"] }]);
    const squatterImage = await t.db.query<{ id: number }>(
      `SELECT id FROM "image" WHERE is_stored_at__image_location = $1`,
      [`${registry.host}/${name}`],
    );
    await expect(claimRepository(t.db, Number(squatterImage.rows[0]?.id))).rejects.toThrow();
  });

  it("answers bad input with a 400 naming the problem", async () => {
    for (const scope of ["repository", "repository:Bad Name:pull", "repository:x:pu ll;"]) {
      const { status, body } = await tokenFor(owner.token, [scope]);
      expect(status, scope).toBe(400);
      expect(String(body.message ?? JSON.stringify(body))).toContain("scope");
    }
    const wrongService = await tokenFor(owner.token, [], "registry.example.com");
    expect(wrongService.status).toBe(400);
    expect(JSON.stringify(wrongService.body)).toContain(registry.host);
    const tooMany = await tokenFor(
      owner.token,
      Array.from({ length: 21 }, () => `repository:${repository}:pull`),
    );
    expect(tooMany.status).toBe(400);
  });
});

describe("without a registry", () => {
  it("answers the token service and the certificate with a 404 that names FLOTILLA_REGISTRY_URL", async () => {
    const plain = await createTestApp();
    try {
      for (const url of ["/auth/v1/token?scope=repository:v2/x:pull", "/auth/v1/registry-cert"]) {
        const response = await plain.app.inject({ url });
        expect(response.statusCode, url).toBe(404);
        expect(response.body).toContain("FLOTILLA_REGISTRY_URL");
      }
    } finally {
      await plain.close();
    }
  });
});
