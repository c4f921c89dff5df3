import crypto from "node:crypto";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { APP_VERSION } from "@flotilla/domain";
import { build } from "esbuild";
import tar from "tar-stream";

const AGENT_DIR = fileURLToPath(new URL("../../../../agent/", import.meta.url));

/**
 * The agent as one ES module: its TypeScript, @flotilla/domain, dockerode, undici and ws bundled,
 * so a device installs it without this repository, a TypeScript toolchain or the npm registry.
 * Left out: @lydell/node-pty (native, one prebuilt package per platform: the installer adds it
 * from the npm registry, and the agent runs without it, lacking only the Host OS terminal), and
 * ssh2's optional native parts (dockerode's ssh:// transport falls back to plain JavaScript).
 */
async function bundleAgent(): Promise<Uint8Array> {
  const result = await build({
    entryPoints: [`${AGENT_DIR}src/main.ts`],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: "none",
    external: ["@lydell/node-pty", "cpu-features", "*.node"],
    logLevel: "silent",
    // Bundled CommonJS dependencies (ws, dockerode) call require() and read __dirname.
    banner: {
      js: [
        "#!/usr/bin/env node",
        'import { createRequire as __flotillaRequire } from "node:module";',
        'import { fileURLToPath as __flotillaPath } from "node:url";',
        "const require = __flotillaRequire(import.meta.url);",
        "const __filename = __flotillaPath(import.meta.url);",
        'const __dirname = __filename.replace(/[\\\\/][^\\\\/]*$/, "");',
      ].join("\n"),
    },
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error("esbuild produced no agent bundle");
  return output.contents;
}

/** The node-pty version the agent is tested with, which the installer adds next to it. */
export function nodePtyVersion(): string {
  const agent = JSON.parse(fs.readFileSync(`${AGENT_DIR}package.json`, "utf8")) as {
    dependencies: Record<string, string>;
  };
  return agent.dependencies["@lydell/node-pty"] ?? "latest";
}

function packageJson(): string {
  // No dependencies: everything but node-pty is in the bundle.
  return `${JSON.stringify(
    {
      name: "flotilla-agent",
      version: APP_VERSION,
      description: "The Flotilla device agent",
      license: "Apache-2.0",
      type: "module",
      bin: { "flotilla-agent": "flotilla-agent.mjs" },
      engines: { node: ">=20" },
    },
    null,
    2,
  )}\n`;
}

async function tarball(files: { name: string; body: string | Uint8Array; mode: number }[]): Promise<Buffer> {
  const pack = tar.pack();
  const gzip = pack.pipe(zlib.createGzip());
  const chunks: Buffer[] = [];
  gzip.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    gzip.on("end", resolve);
    gzip.on("error", reject);
  });
  // A fixed date keeps the tarball the same for the same agent source.
  const mtime = new Date("2000-01-01T00:00:00Z");
  for (const file of files) {
    pack.entry({ name: `package/${file.name}`, mode: file.mode, mtime }, Buffer.from(file.body));
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

export type AgentPackage = { tgz: Buffer; sha256: string; version: string };

/** `npm install -g <tarball>` installs `flotilla-agent` from this. */
export async function buildAgentPackage(): Promise<AgentPackage> {
  const tgz = await tarball([
    { name: "package.json", body: packageJson(), mode: 0o644 },
    { name: "flotilla-agent.mjs", body: await bundleAgent(), mode: 0o755 },
    { name: "README.md", body: fs.readFileSync(`${AGENT_DIR}README.md`), mode: 0o644 },
  ]);
  return { tgz, sha256: crypto.createHash("sha256").update(tgz).digest("hex"), version: APP_VERSION };
}

let building: Promise<AgentPackage> | undefined;
/**
 * The agent package, bundled on first use (about a second) and kept: the agent's source does not
 * change while the server runs. A failed bundle is tried again on the next call.
 */
export function agentPackage(): Promise<AgentPackage> {
  building ??= buildAgentPackage().catch((error: unknown) => {
    building = undefined;
    throw error;
  });
  return building;
}
