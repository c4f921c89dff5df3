import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { APP_VERSION } from "@flotilla/domain";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeStalledBuilds } from "../src/features/releases/queries.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { tarOf } from "./support/tar.ts";

/**
 * Releases and builds (issue #9, docs/releases.md): the builder endpoints with real uploads,
 * release rules and rollout through the real balena-sdk, release assets, builds from a URL.
 */
let t: TestApp;
let sdk: BalenaSDK;
let token: string;
let observerToken: string;
let strangerToken: string;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: { id: number; uuid: string };

type Event = { type: string; status?: string; id?: number; commit?: string; raw_version?: string; message?: string };

async function push(files: Record<string, string>, query = `app=${fleet.id}`, bearer = token) {
  const response = await fetch(`${t.url}/v3/build?${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/x-tar" },
    body: gzipSync(await tarOf(files)),
  });
  const text = await response.text();
  const events: Event[] = response.ok
    ? text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
    : [];
  return { status: response.status, text, events, final: events.at(-1) };
}

const COMPOSE = `services:
  web:
    image: nginx:1.27-alpine
    labels: { io.balena.features.supervisor-api: "1" }
  worker:
    image: alpine:3.20
    environment: [MODE=batch]
`;

const releaseRow = async (id: number) =>
  (
    await t.db.query<Record<string, unknown>>(
      `SELECT status, is_final, build_log, composition, revision, semver_major, end_timestamp FROM "release" WHERE id = $1`,
      [id],
    )
  ).rows[0];
const fleetTarget = async () =>
  (
    await t.db.query<{ r: number | null }>(`SELECT should_be_running__release AS r FROM application WHERE id = $1`, [
      fleet.id,
    ])
  ).rows[0]?.r;

beforeAll(async () => {
  // buildFromUrl fetches from a stand-in host on 127.0.0.1, which only an operator allowance lets through.
  t = await createTestApp({ FLOTILLA_FETCH_ALLOW: "127.0.0.1" });
  const me = await t.factories.user({ email: "builder@example.com", password: "builder-password" });
  token = me.token;
  const org = await t.factories.organization({ name: "BuildCo", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "buildfleet" });
  device = await t.factories.device(fleet, { name: "edge" });
  const observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, fleet, "observer");
  observerToken = observer.token;
  strangerToken = (await t.factories.user()).token;
  sdk = getSdk({ apiUrl: t.url, builderUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "builder@example.com", password: "builder-password" });
});
afterAll(() => t?.close());

describe("POST /v3/build", () => {
  let first: number;

  it("builds a compose project of prebuilt images into a final release that a tracking fleet moves to", async () => {
    const { status, events, final } = await push({ "docker-compose.yml": COMPOSE, "balena.yml": "version: 1.2.0" });
    expect(status).toBe(200);
    expect(events[0]).toMatchObject({ type: "release" });
    expect(events.map((e) => e.message).filter(Boolean)).toEqual([
      "Building release for 2 service(s): web, worker",
      "[web] Using prebuilt image nginx:1.27-alpine",
      "[worker] Using prebuilt image alpine:3.20",
      "Release created",
    ]);
    expect(final).toMatchObject({ type: "status", status: "success", raw_version: "1.2.0" });
    first = Number(final?.id);
    const release = await sdk.models.release.get(first, {
      $expand: { release_image: { $expand: { image: { $expand: { is_a_build_of__service: {} } } } } },
    });
    expect(release).toMatchObject({ status: "success", is_final: true, raw_version: "1.2.0", source: "cloud" });
    expect(release.build_log).toContain("[worker] Using prebuilt image alpine:3.20");
    expect(release.composition).toMatchObject({ services: { web: { image: "nginx:1.27-alpine" } } });
    const images = (release.release_image as { image: { is_stored_at__image_location: string; status: string }[] }[])
      .map((ri) => ri.image[0])
      .map((image) => [image?.is_stored_at__image_location, image?.status]);
    expect(images.sort()).toEqual([
      ["alpine:3.20", "success"],
      ["nginx:1.27-alpine", "success"],
    ]);
    expect(await fleetTarget()).toBe(first);
    // The device's target state carries the release with the image's labels and environment.
    const state = await t.ctx.devices.targetStates.get(device.uuid);
    expect(state?.body).toContain(String(final?.commit));
    expect(state?.body).toContain('"MODE":"batch"');
  });

  it("numbers a repeat of a version as a revision", async () => {
    const { final } = await push({ "docker-compose.yml": COMPOSE, "balena.yml": "version: 1.2.0" });
    expect(final).toMatchObject({ status: "success", raw_version: "1.2.0+rev1" });
  });

  it("keeps a draft out of the rollout until it is finalized, once", async () => {
    const before = await fleetTarget();
    const { final } = await push({ "docker-compose.yml": COMPOSE }, `app=${fleet.id}&draft=true&message=try%20me`);
    // A draft's version is unique until it is finalized: its creation time in ms, as balena's.
    expect(final).toMatchObject({ status: "success", raw_version: expect.stringMatching(/^0\.0\.0-\d{13}$/) });
    const draft = Number(final?.id);
    expect(await releaseRow(draft)).toMatchObject({ is_final: false });
    expect(await fleetTarget()).toBe(before);
    await sdk.models.release.finalize(draft);
    expect(await fleetTarget()).toBe(draft);
    await expect(sdk.models.release.finalize(draft)).rejects.toMatchObject({ statusCode: 409 });
    await expect(sdk.pine.patch({ resource: "release", id: draft, body: { is_final: false } })).rejects.toMatchObject({
      statusCode: 400,
    });
  });

  it("fails a bad compose file with the parse error in the build log, and leaves the fleet where it was", async () => {
    const before = await fleetTarget();
    const { final, events } = await push({ "docker-compose.yml": "services:\n  web:\n    image: [oops" });
    expect(final).toMatchObject({ status: "failed" });
    expect(events.some((e) => e.message?.startsWith("error: docker-compose.yml:"))).toBe(true);
    const row = await releaseRow(Number(final?.id));
    expect(row?.status).toBe("failed");
    expect(String(row?.build_log)).toMatch(/error: docker-compose\.yml: .+\nbuild failed\n$/);
    expect(row?.end_timestamp).not.toBeNull();
    expect(await fleetTarget()).toBe(before);
  });

  it("fails services that need a build: no builder is configured", async () => {
    const { final, events } = await push({
      "docker-compose.yml": "services:\n  api:\n    build: ./api\n  web:\n    image: nginx\n",
      "api/Dockerfile": "FROM node:22\nCMD node index.js\n",
    });
    expect(final).toMatchObject({ status: "failed" });
    expect(events.map((e) => e.message)).toContain(
      "[api] error: no builder configured: this server cannot run docker build; use prebuilt images (image:)",
    );
    const { rows } = await t.db.query<{ dockerfile: string; status: string }>(
      `SELECT i.dockerfile, i.status FROM image i JOIN release_image ri ON ri.image = i.id
        WHERE ri.is_part_of__release = $1 ORDER BY i.id`,
      [final?.id],
    );
    expect(rows).toEqual([
      { dockerfile: "FROM node:22\nCMD node index.js\n", status: "failed" },
      { dockerfile: null, status: "success" },
    ]);
  });

  it("finds the fleet by owner and name, and refuses strangers, observers and bad uploads", async () => {
    expect((await push({ Dockerfile: "FROM alpine" }, "owner=buildco&app=BUILDFLEET")).status).toBe(200);
    expect((await push({ Dockerfile: "FROM alpine" }, "owner=buildco&app=nope")).status).toBe(404);
    const stranger = await push({ Dockerfile: "FROM alpine" }, `app=${fleet.id}`, strangerToken);
    expect(stranger.status).toBe(404);
    expect(JSON.parse(stranger.text).message).toBe(`Fleet not found: ${fleet.id}`);
    expect((await push({ Dockerfile: "FROM alpine" }, `app=${fleet.id}`, observerToken)).status).toBe(403);
    const notTar = await fetch(`${t.url}/v3/build?app=${fleet.id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-tar" },
      body: "x".repeat(1024),
    });
    expect(notTar.status).toBe(400);
    expect(((await notTar.json()) as { code: string }).code).toBe("build_upload_invalid");
    const json = await fetch(`${t.url}/v3/build?app=${fleet.id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(415);
    expect((await fetch(`${t.url}/v3/build?app=${fleet.id}`, { method: "POST" })).status).toBe(401);
  });
});

describe("release rules", () => {
  it("refuses to validate a failed release, and to pin fleets or devices to invalid ones", async () => {
    const { final } = await push({ "docker-compose.yml": "services: {}" });
    const failed = Number(final?.id);
    await expect(sdk.models.release.setIsInvalidated(failed, false)).rejects.toMatchObject({
      statusCode: 400,
      body: "Failed or cancelled releases cannot be marked valid.",
    });
    // balena-sdk's pinToRelease looks up successful releases only; the API refuses the rest itself,
    // with balena's rules (the dashboard words it as the spec does, with the release's id).
    await expect(
      sdk.pine.patch({ resource: "application", id: fleet.id, body: { should_be_running__release: failed } }),
    ).rejects.toMatchObject({
      statusCode: 400,
      body: 'It is necessary that each release that should be running on an application, has a status that is equal to "success" and belongs to the application.',
    });
    const pinned = (await sdk.pine
      .patch({ resource: "device", id: device.id, body: { is_pinned_on__release: failed } })
      .catch((error: unknown) => error)) as { statusCode: number; body: string; responseHeaders: Headers };
    expect(pinned).toMatchObject({
      statusCode: 400,
      body: 'It is necessary that each release that is pinned to a device, has a status that is equal to "success" and belongs to an application1 that the device belongs to.',
    });
    expect(decodeURIComponent(pinned.responseHeaders.get("x-flotilla-error-params") ?? "")).toBe(
      JSON.stringify({ release: String(failed) }),
    );
  });

  it("takes only whole version numbers of 0 and up", async () => {
    const { final } = await push({ "docker-compose.yml": COMPOSE }, `app=${fleet.id}&draft=true`);
    const id = Number(final?.id);
    const refusal = { statusCode: 400, body: "semver_major must be a whole number of 0 or more" };
    await expect(sdk.pine.patch({ resource: "release", id, body: { semver_major: -1 } })).rejects.toMatchObject(
      refusal,
    );
    await expect(
      sdk.pine.post({
        resource: "release",
        body: {
          belongs_to__application: fleet.id,
          commit: "abc",
          status: "success",
          composition: {},
          source: "cloud",
          semver_major: -1,
        },
      }),
    ).rejects.toMatchObject(refusal);
    expect(await releaseRow(id)).toMatchObject({ semver_major: 0 });
    await sdk.pine.patch({ resource: "release", id, body: { semver_major: 3 } });
    expect(await releaseRow(id)).toMatchObject({ semver_major: 3 });
  });

  it("will not delete a release a fleet or a device points at", async () => {
    const target = Number(await fleetTarget());
    await expect(sdk.pine.delete({ resource: "release", id: target })).rejects.toMatchObject({
      statusCode: 409,
      body: "A release that a fleet or a device is pinned to (or targets) cannot be deleted.",
    });
    const { final } = await push({ Dockerfile: "FROM alpine" }, `app=${fleet.id}&draft=true`);
    await sdk.pine.delete({ resource: "release", id: Number(final?.id) });
    expect(await releaseRow(Number(final?.id))).toBeUndefined();
  });

  it("invalidating the fleet's release moves a tracking fleet back to the newest valid one; pins stay", async () => {
    const current = Number(await fleetTarget());
    const previous = (
      await t.db.query<{ id: number }>(
        `SELECT id FROM release WHERE belongs_to__application = $1 AND status = 'success' AND is_final AND id <> $2
          ORDER BY created_at DESC, id DESC LIMIT 1`,
        [fleet.id, current],
      )
    ).rows[0]?.id;
    const commitOf = async (id: number) => (await sdk.models.release.get(id, { $select: "commit" })).commit;
    await sdk.models.device.pinToRelease(device.uuid, await commitOf(current));
    await sdk.models.release.setIsInvalidated(current, true);
    expect(await fleetTarget()).toBe(previous);
    const pinned = await sdk.models.device.get(device.uuid, { $select: "is_pinned_on__release" });
    expect(pinned.is_pinned_on__release).toEqual({ __id: current });
    await sdk.models.device.trackApplicationRelease(device.uuid);
    await sdk.models.release.setIsInvalidated(current, false);
    expect(await fleetTarget()).toBe(current);
    await sdk.models.application.pinToRelease(fleet.id, await commitOf(Number(previous)));
    expect(await fleetTarget()).toBe(previous);
    // A pinned fleet does not follow new releases.
    await push({ "docker-compose.yml": COMPOSE });
    expect(await fleetTarget()).toBe(previous);
    await sdk.models.application.trackLatestRelease(fleet.id);
    expect(await fleetTarget()).not.toBe(previous);
  });
});

describe("stalled builds", () => {
  it("are closed after two minutes without progress, with 'build timed out' in their log", async () => {
    const stalled = (await sdk.pine.post({
      resource: "release",
      body: {
        belongs_to__application: fleet.id,
        commit: "stalled1",
        status: "running",
        composition: {},
        source: "cloud",
      },
    })) as { id: number };
    const live = (await sdk.pine.post({
      resource: "release",
      body: {
        belongs_to__application: fleet.id,
        commit: "live0001",
        status: "running",
        composition: {},
        source: "cloud",
      },
    })) as { id: number };
    await t.db.query(`UPDATE "release" SET update_timestamp = now() - interval '121 seconds' WHERE id = $1`, [
      stalled.id,
    ]);
    await t.db.query(`UPDATE "release" SET update_timestamp = now() - interval '100 seconds' WHERE id = $1`, [live.id]);
    expect(await closeStalledBuilds(t.db)).toEqual([stalled.id]);
    expect(await releaseRow(stalled.id)).toMatchObject({
      status: "timeout",
      build_log: expect.stringMatching(/build timed out\n$/),
    });
    expect((await releaseRow(stalled.id))?.end_timestamp).not.toBeNull();
    expect(await releaseRow(live.id)).toMatchObject({ status: "running", end_timestamp: null });
  });
});

describe("release assets", () => {
  it("uploads with balena-sdk release.asset.upload and downloads through the href with the bearer token", async () => {
    const { final } = await push({ "docker-compose.yml": COMPOSE });
    const release = Number(final?.id);
    const file = new File(["firmware bytes"], "firmware.bin", { type: "application/octet-stream" });
    const asset = await sdk.models.release.asset.upload({ asset: file, asset_key: "bin/firmware.bin", release });
    expect(asset.asset).toMatchObject({ filename: "firmware.bin", size: 14 });
    const href = (asset.asset as { href: string }).href;
    expect(href).toMatch(`${t.config.apiUrl}/release-asset/v1/${asset.id}/download?expires=`);
    const local = href.replace(t.config.apiUrl, t.url).replace(/\?.*$/, "");
    const download = await fetch(local, { headers: { authorization: `Bearer ${token}` } });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("firmware bytes");
    expect((await fetch(local, { headers: { authorization: `Bearer ${strangerToken}` } })).status).toBe(404);
    expect((await fetch(local, { headers: { authorization: `Bearer ${observerToken}` } })).status).toBe(200);
    const all = await sdk.models.release.asset.getAllByRelease(release);
    expect(all.map((a) => a.asset_key)).toEqual(["bin/firmware.bin"]);

    // The owner replaces the file with a multipart PATCH; the observer may not.
    const patch = async (bearer: string, text: string) => {
      const form = new FormData();
      form.append("asset", new File([text], "firmware-2.bin", { type: "application/octet-stream" }));
      return fetch(`${t.url}/v7/release_asset(${asset.id})`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${bearer}` },
        body: form,
      });
    };
    // Readable but not the observer's to change: refused by name (issue #17), the file untouched.
    expect((await patch(observerToken, "observer bytes")).status).toBe(401);
    expect(await (await fetch(local, { headers: { authorization: `Bearer ${token}` } })).text()).toBe("firmware bytes");
    expect((await patch(token, "new firmware")).status).toBe(200);
    const replaced = await fetch(local, { headers: { authorization: `Bearer ${token}` } });
    expect(await replaced.text()).toBe("new firmware");
    expect(replaced.headers.get("content-disposition")).toContain("firmware-2.bin");
  });
});

describe("POST /v3/buildFromUrl (release.createFromUrl)", () => {
  it("downloads a repository tarball, flattens it and builds it in the background", async () => {
    const archive = gzipSync(await tarOf({ "project-main/docker-compose.yml": COMPOSE }));
    const server = http.createServer((request, response) => {
      if (request.url === "/archive.tar.gz") response.end(archive);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const id = await sdk.models.release.createFromUrl(fleet.id, { url: `${base}/archive.tar.gz` });
      let release = await sdk.models.release.get(id);
      for (let i = 0; i < 50 && release.status === "running"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        release = await sdk.models.release.get(id);
      }
      expect(release.status).toBe("success");
      await expect(sdk.models.release.createFromUrl(fleet.id, { url: `${base}/missing.tar.gz` })).rejects.toThrow(
        /Could not download/,
      );
    } finally {
      server.close();
    }
  });
});

describe("GET /cli/package.json", () => {
  it("tells the CLI version without a token", async () => {
    const response = await fetch(`${t.url}/cli/package.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ name: "flotilla", version: APP_VERSION });
  });
});
