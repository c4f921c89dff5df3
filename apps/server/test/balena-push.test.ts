import http from "node:http";
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { tarOf } from "./support/tar.ts";

/**
 * `balena push` against Flotilla (issue #22, docs/balena-cli.md): the request exactly as
 * balena-cli's remote build sends it — `POST /v3/build?slug=…&dockerfilePath=&emulated=&nocache=
 * &headless=&isdraft=`, the tar gzipped on the fly, `Content-Encoding: gzip`, no Content-Type,
 * chunked — and the answer read as the CLI reads it: a JSON array of builder messages, the release
 * id from the `buildLogId` metadata, a failure from any `isError` message.
 */
let t: TestApp;
let token: string;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let slug: string;

type Message = { type?: string; resource?: string; value?: number; message?: string; isError?: boolean };

const COMPOSE = `services:
  web:
    image: nginx:1.27-alpine
`;

/** balena-cli's query: every flag present, as querystring.stringify writes them. */
function builderQuery(overrides: Record<string, string> = {}) {
  return new URLSearchParams({
    slug,
    dockerfilePath: "",
    emulated: "false",
    nocache: "false",
    headless: "false",
    isdraft: "false",
    ...overrides,
  }).toString();
}

/** POSTs the project as balena-cli's got stream does; resolves with the status and the raw body. */
async function balenaPush(
  files: Record<string, string>,
  query = builderQuery(),
  bearer = token,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const url = new URL(`${t.url}/v3/build?${query}`);
  const body = Readable.from([await tarOf(files)]).pipe(createGzip({ level: 6 }));
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: "POST",
      headers: { "user-agent": "got (https://github.com/sindresorhus/got)", "content-encoding": "gzip" },
    });
    request.setHeader("authorization", `Bearer ${bearer}`);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          headers: response.headers,
        }),
      );
    });
    request.on("error", reject);
    body.pipe(request);
  });
}

/** What balena-cli's remote-build handler makes of the stream. */
function asBalenaCli(body: string) {
  const messages = JSON.parse(body) as Message[];
  const metadata = messages.find((m) => m.type === "metadata" && m.resource === "buildLogId");
  return {
    messages,
    releaseId: metadata ? Number.parseInt(String(metadata.value), 10) : undefined,
    hadError: messages.some((m) => m.isError === true),
    lines: messages.flatMap((m) => (m.message === undefined ? [] : [m.message])),
  };
}

const releaseRow = async (id: number) =>
  (
    await t.db.query<{ status: string; is_final: boolean; composition: Record<string, unknown> | null }>(
      `SELECT status, is_final, composition FROM "release" WHERE id = $1`,
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
  t = await createTestApp();
  const me = await t.factories.user({ username: "gh_user" });
  token = me.token;
  const org = await t.factories.organization({ name: "pushco", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "testApp" });
  slug = fleet.slug as string;
});
afterAll(() => t?.close());

describe("balena push (builder protocol)", () => {
  it("builds a gzipped upload without Content-Type and answers balena's message array, release id first", async () => {
    const response = await balenaPush({ "docker-compose.yml": COMPOSE, "balena.yml": "version: 1.2.3\n" });
    expect(response.status).toBe(200);
    const cli = asBalenaCli(response.body);
    expect(cli.messages[0]).toEqual({ type: "metadata", resource: "buildLogId", value: cli.releaseId });
    expect(cli.hadError).toBe(false);
    expect(cli.lines[0]).toBe("[Info] Starting build for pushco/testApp, user gh_user");
    expect(cli.lines).toContain("[web] Using prebuilt image nginx:1.27-alpine");
    expect(cli.lines).toContain("[Success] Release successfully created!");
    const release = await releaseRow(cli.releaseId as number);
    expect(release).toMatchObject({ status: "success", is_final: true });
    // A final release rolls out to the fleet that tracks the latest.
    expect(await fleetTarget()).toBe(cli.releaseId);
  });

  it("makes a draft with isdraft=true: not final, and the fleet keeps its release", async () => {
    const before = await fleetTarget();
    expect(before).not.toBeNull();
    const cli = asBalenaCli(
      (await balenaPush({ "docker-compose.yml": COMPOSE }, builderQuery({ isdraft: "true" }))).body,
    );
    expect(cli.hadError).toBe(false);
    expect(await releaseRow(cli.releaseId as number)).toMatchObject({ status: "success", is_final: false });
    expect(await fleetTarget()).toBe(before);
  });

  it("flags a failing build as an error, so the CLI exits non-zero, and the release is failed", async () => {
    const cli = asBalenaCli(
      (
        await balenaPush({
          "docker-compose.yml": "services:\n  web:\n    build: ./web\n",
          "web/Dockerfile": "FROM scratch\n",
        })
      ).body,
    );
    expect(cli.hadError).toBe(true);
    expect(cli.messages.find((m) => m.message?.startsWith("[web] error: no builder configured"))?.isError).toBe(true);
    expect(cli.messages.at(-1)).toMatchObject({
      isError: true,
      message: expect.stringMatching(/^\[Error\] Build failed/),
    });
    expect(await releaseRow(cli.releaseId as number)).toMatchObject({ status: "failed", is_final: false });

    const invalid = asBalenaCli((await balenaPush({ "docker-compose.yml": "services: {}\n" })).body);
    expect(invalid.hadError).toBe(true);
    expect(invalid.lines).toContain("[Error] docker-compose.yml: there are no services");
  });

  it("uses dockerfilePath for a project without a compose file, and names a missing one", async () => {
    const alt = asBalenaCli(
      (await balenaPush({ "Dockerfile-alt": "FROM scratch\n" }, builderQuery({ dockerfilePath: "Dockerfile-alt" })))
        .body,
    );
    // Read and recorded; without an image builder, building it is what fails.
    expect(alt.lines.some((line) => line.startsWith("[main] error: no builder configured"))).toBe(true);
    expect((await releaseRow(alt.releaseId as number))?.composition).toEqual({
      version: "2.1",
      services: { main: { build: { context: ".", dockerfile: "Dockerfile-alt" } } },
    });
    const missing = asBalenaCli(
      (await balenaPush({ Dockerfile: "FROM scratch\n" }, builderQuery({ dockerfilePath: "docker/Dockerfile.arm" })))
        .body,
    );
    expect(missing.hadError).toBe(true);
    expect(missing.lines).toContain("[Error] docker/Dockerfile.arm (dockerfilePath) is not in the project");
  });

  it("answers one JSON object when detached (headless=true) and builds on", async () => {
    const response = await balenaPush({ "docker-compose.yml": COMPOSE }, builderQuery({ headless: "true" }));
    expect(response.status).toBe(200);
    const message = JSON.parse(response.body) as { started: boolean; releaseId: number };
    expect(message).toEqual({ started: true, releaseId: expect.any(Number) });
    await expect.poll(async () => (await releaseRow(message.releaseId))?.status).toBe("success");
  });

  it("refuses a bad slug, an unknown fleet and a missing token with a clear error, creating nothing", async () => {
    const count = async () =>
      Number((await t.db.query<{ n: number }>(`SELECT count(*) AS n FROM "release"`)).rows[0]?.n);
    const releases = await count();
    const bad = await balenaPush({ "docker-compose.yml": COMPOSE }, builderQuery({ slug: "no-slash" }));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).message).toBe("slug must read {organization}/{fleet}");
    const unknown = await balenaPush({ "docker-compose.yml": COMPOSE }, builderQuery({ slug: "pushco/nope" }));
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).message).toBe("Fleet not found: pushco/nope");
    const stranger = await t.factories.user();
    expect((await balenaPush({ "docker-compose.yml": COMPOSE }, builderQuery(), stranger.token)).status).toBe(404);
    expect((await balenaPush({ "docker-compose.yml": COMPOSE }, builderQuery(), "not-a-key")).status).toBe(401);
    const neither = await balenaPush({ "docker-compose.yml": COMPOSE }, "dockerfilePath=");
    expect(neither.status).toBe(400);
    expect(await count()).toBe(releases);
  });
});
