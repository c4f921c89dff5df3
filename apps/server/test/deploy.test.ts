import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDeployContract } from "../src/features/deploy/contract.ts";
import { fetchAllowList } from "../src/lib/outbound-fetch.ts";
import { createTestApp, type TestApp } from "./harness.ts";

const noAllowance = fetchAllowList([]);

/** Spec 2 §4 "Deploy configuration", §8 texts, §9: GET /deploy/v1/contract against a stand-in host. */
const WIDGET = `name: Widget Kiosk
type: sw.application
description: A kiosk that shows widgets.
data:
  defaultDeviceType: raspberrypi4-64
  supportedDeviceTypes:
    - raspberrypi4-64
    - raspberrypi3
  applicationEnvironmentVariables:
    - GREETING: hello
  applicationConfigVariables:
    - BALENA_HOST_CONFIG_gpu_mem: 64
`;

const files: Record<string, { branch: string; yml?: string; status?: number }> = {
  widget: { branch: "main", yml: WIDGET },
  broken: { branch: "master", yml: "name: [unclosed\n  : :" },
  shapeless: { branch: "main", yml: "description: no name here\n" },
  nofile: { branch: "main" },
  huge: { branch: "main", yml: `name: Huge\ndescription: ${"x".repeat(300_000)}\n` },
  flaky: { branch: "main", status: 500 },
};

let host: http.Server;
let hostUrl: string;
let t: TestApp;
let token: string;

beforeAll(async () => {
  host = http.createServer((req, res) => {
    const url = req.url ?? "";
    const api = /^\/repos\/acme\/([^/]+)$/.exec(url);
    if (api) {
      const repo = files[api[1] as string];
      if (!repo) return void res.writeHead(404, { "content-type": "application/json" }).end('{"message":"Not Found"}');
      if (repo.status) return void res.writeHead(repo.status).end();
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ full_name: `acme/${api[1]}`, default_branch: repo.branch }));
    }
    const raw = /^\/raw\/acme\/([^/]+)\/([^/]+)\/balena\.yml$/.exec(url);
    const repo = raw && files[raw[1] as string];
    if (repo?.yml !== undefined && repo.branch === raw?.[2]) {
      return void res.writeHead(200, { "content-type": "text/plain" }).end(repo.yml);
    }
    if (url === "/slow/repos/acme/widget") return; // never answers
    res.writeHead(404).end("404: Not Found");
  });
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  t = await createTestApp({ FLOTILLA_REPOSITORY_API_URL: hostUrl, FLOTILLA_REPOSITORY_RAW_URL: `${hostUrl}/raw` });
  token = (await t.factories.user()).token;
});
afterAll(async () => {
  await t.close();
  host.closeAllConnections();
  await new Promise((resolve) => host.close(resolve));
});

async function contract(repoUrl: string | undefined, auth = true) {
  const query = repoUrl === undefined ? "" : `?repoUrl=${encodeURIComponent(repoUrl)}`;
  const response = await fetch(`${t.url}/deploy/v1/contract${query}`, {
    headers: auth ? { authorization: `Bearer ${token}` } : {},
  });
  return {
    status: response.status,
    code: response.headers.get("x-flotilla-error-code"),
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe("deploy contract (spec 2 §4, §8, §9)", () => {
  it("reads balena.yml of the default branch and normalises the variables", async () => {
    const answer = await contract("https://github.com/acme/widget.git");
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      repoUrl: "https://github.com/acme/widget.git",
      defaultBranch: "main",
      contract: {
        name: "Widget Kiosk",
        type: "sw.application",
        description: "A kiosk that shows widgets.",
        defaultDeviceType: "raspberrypi4-64",
        supportedDeviceTypes: ["raspberrypi4-64", "raspberrypi3"],
        applicationEnvironmentVariables: [{ name: "GREETING", value: "hello" }],
        applicationConfigVariables: [{ name: "BALENA_HOST_CONFIG_gpu_mem", value: "64" }],
      },
    });
    expect((await contract("https://github.com/acme/widget/")).status).toBe(200);
  });

  it("needs a signed-in user", async () => {
    expect((await contract("https://github.com/acme/widget", false)).status).toBe(401);
  });

  it.each([
    [undefined, "Deploy from URL needs a repository or tarball URL."],
    ["", "Deploy from URL needs a repository or tarball URL."],
    ["not a url", "Not a repository URL: not a url"],
    ["ftp://github.com/acme/widget", "Not a repository URL: ftp://github.com/acme/widget"],
    [
      "https://github.com/acme",
      "The repository URL must name an owner and a repository (https://github.com/{owner}/{repo}): https://github.com/acme",
    ],
  ])("refuses a missing or malformed URL %j with 400", async (repoUrl, message) => {
    const answer = await contract(repoUrl);
    expect(answer).toEqual({ status: 400, code: "deploy_url_required", body: expect.objectContaining({ message }) });
    expect(answer.body.code).toBe("deploy_url_required");
  });

  it("answers 404 when the repository or its balena.yml is missing", async () => {
    for (const repo of ["missing", "nofile"]) {
      const url = `https://github.com/acme/${repo}`;
      const answer = await contract(url);
      expect(answer.status).toBe(404);
      expect(answer.code).toBe("deploy_repository_not_found");
      expect(answer.body.message).toBe(`Repository not found: ${url}`);
    }
  });

  it("answers 422 for invalid YAML, a contract without a name, or a file over the size cap", async () => {
    for (const repo of ["broken", "shapeless", "huge"]) {
      const answer = await contract(`https://github.com/acme/${repo}`);
      expect(answer.status, repo).toBe(422);
      expect(answer.code).toBe("deploy_contract_invalid");
      expect(answer.body.message).toBe("The balena.yml contract in the repository is invalid");
    }
  });

  it("answers 502 when the host fails", async () => {
    const answer = await contract("https://github.com/acme/flaky");
    expect(answer.status).toBe(502);
    expect(answer.code).toBe("deploy_config_load_failed");
    expect(answer.body.message).toBe("Error loading deploy configuration");
  });

  it("gives up after the timeout or when the host cannot be reached", async () => {
    await expect(
      loadDeployContract(
        "https://github.com/acme/widget",
        { apiUrl: `${hostUrl}/slow`, rawUrl: hostUrl, allow: noAllowance },
        200,
      ),
    ).rejects.toMatchObject({ code: "deploy_config_load_failed", statusCode: 502 });
    await expect(
      loadDeployContract("https://github.com/acme/widget", {
        apiUrl: "http://127.0.0.1:1",
        rawUrl: hostUrl,
        allow: noAllowance,
      }),
    ).rejects.toMatchObject({ code: "deploy_config_load_failed" });
  });
});
