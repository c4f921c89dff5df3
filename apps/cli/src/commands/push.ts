import fs from "node:fs";
import path from "node:path";
import { assetOption, nonEmpty, parseCommand } from "../args.ts";
import { CliError, describeError, UsageError } from "../errors.ts";
import { type Command, formatBytes } from "../io.ts";
import { packProject, projectKind } from "../pack.ts";
import { openSession, resolveFleet } from "../sdk.ts";
import { sendBuild } from "./send-build.ts";

/** A release asset goes up in one request, so at most this large (docs/releases.md "Release assets"). */
export const ASSET_MAX_BYTES = 5 * 1024 * 1024;

const options = {
  draft: { type: "boolean" },
  note: { type: "string" },
  asset: { type: "string", multiple: true },
} as const;

/** The `--asset` files, checked before anything is sent: each a readable file of at most 5 MiB, keys unique. */
export function checkAssets(values: string[], cwd: string): { file: string; key: string; size: number }[] {
  const assets = values.map(assetOption);
  const keys = new Set<string>();
  return assets.map(({ file, key }) => {
    if (keys.has(key)) throw new UsageError(`two --asset options have the key "${key}"`);
    keys.add(key);
    const resolved = path.resolve(cwd, file);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(resolved);
    } catch {
      throw new CliError(`--asset ${file}: no such file`);
    }
    if (!stat.isFile()) throw new CliError(`--asset ${file} is not a file`);
    if (stat.size > ASSET_MAX_BYTES) {
      throw new CliError(`--asset ${file} is ${formatBytes(stat.size)}: a release asset is at most 5 MiB`);
    }
    return { file: resolved, key, size: stat.size };
  });
}

export const push: Command = {
  name: "push",
  summary: "build a project directory into a new release of a fleet",
  usage: `Usage: flotilla push <fleet> [dir] [--draft] [--note TEXT] [--asset FILE[:KEY]]...

Packs the project directory (default: the current one) as a tar, leaving out what .dockerignore
names and .git and node_modules, sends it to the builder and prints the build log. The project
needs a docker-compose.yml (or .yaml) or a Dockerfile at its top; balena.yml may give the version.

  <fleet>            organization/fleet, a fleet name, or the fleet's numeric id
  --draft            make a draft release (not final: fleets tracking the latest do not move to it)
  --note TEXT        the release note
  --asset FILE[:KEY] after a successful build, attach FILE to the release under KEY (default:
                     the file's name); up to 5 MiB each, repeatable

Exit codes: 0 the release built, 1 the build failed or the API refused, 2 bad usage, 130 Ctrl-C
(the build is cancelled).`,
  async run(args, io) {
    const { values, positionals } = parseCommand(args, options, { min: 1, max: 2, names: "the fleet" });
    const [fleetReference = "", dirArgument] = positionals;
    const dir = path.resolve(io.cwd, dirArgument ?? ".");
    const note = nonEmpty(values.note, "note");
    const assets = checkAssets(values.asset ?? [], io.cwd);
    if (fs.existsSync(dir)) projectKind(dir); // a project without a build file fails before any request
    const session = await openSession(io.env);
    const fleet = await resolveFleet(session.sdk, fleetReference);
    const archive = await packProject(dir);
    const result = await sendBuild(
      session,
      fleet,
      archive,
      { ...(values.draft ? { draft: true } : {}), ...(note !== undefined ? { note } : {}) },
      io,
    );
    if (result.status !== "success") return 1;
    const releaseId = result.releaseId;
    if (assets.length > 0 && releaseId === undefined)
      throw new CliError("The builder did not name the release: no assets uploaded");
    for (const asset of assets) {
      try {
        await session.sdk.models.release.asset.upload({
          asset: asset.file,
          asset_key: asset.key,
          release: releaseId as number,
        });
      } catch (error) {
        throw new CliError(`Asset ${asset.key} was not uploaded: ${describeError(error, session.apiUrl)}`);
      }
      io.out(`Asset ${asset.key} uploaded (${formatBytes(asset.size)})`);
    }
    await session.save();
    return 0;
  },
};
