import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { nonEmpty, parseCommand } from "../args.ts";
import { CliError, UsageError } from "../errors.ts";
import type { Command } from "../io.ts";
import { packFiles } from "../pack.ts";
import { openSession, resolveFleet } from "../sdk.ts";
import { sendBuild } from "./send-build.ts";

const options = {
  compose: { type: "string" },
  draft: { type: "boolean" },
  note: { type: "string" },
} as const;

/**
 * Checks that a compose file releases prebuilt images only: it parses, has services, and each
 * service names an `image:` and has no `build:`. Returns the service names.
 */
export function checkPrebuiltCompose(text: string, file: string): string[] {
  const document = YAML.parseDocument(text);
  const [problem] = document.errors;
  if (problem) {
    const where = problem.linePos?.[0] ? ` (line ${problem.linePos[0].line})` : "";
    throw new CliError(
      `${file} is not valid YAML${where}: ${(problem.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "")}`,
    );
  }
  const compose = document.toJS() as unknown;
  const services = (compose as { services?: unknown } | null)?.services;
  if (!services || typeof services !== "object" || Array.isArray(services) || Object.keys(services).length === 0) {
    throw new CliError(`${file} has no services`);
  }
  const building: string[] = [];
  for (const [name, service] of Object.entries(services as Record<string, unknown>)) {
    if (!service || typeof service !== "object") throw new CliError(`${file}: service "${name}" is not a mapping`);
    const { build, image } = service as { build?: unknown; image?: unknown };
    if (build !== undefined) building.push(name);
    else if (typeof image !== "string" || image.trim() === "") {
      throw new CliError(`${file}: service "${name}" has no image`);
    }
  }
  if (building.length > 0) {
    const names = building.map((name) => `"${name}"`).join(", ");
    throw new CliError(
      `${file}: ${building.length === 1 ? "service" : "services"} ${names} ${building.length === 1 ? "has" : "have"} build: — deploy releases prebuilt images only; use flotilla push to build from source`,
    );
  }
  return Object.keys(services);
}

export const deploy: Command = {
  name: "deploy",
  summary: "release prebuilt images named in a compose file",
  usage: `Usage: flotilla deploy <fleet> --compose FILE [--draft] [--note TEXT]

Makes a release of the images a compose file names (every service needs image:, none may have
build:; to build from source use flotilla push). Only that file is sent, as docker-compose.yml.

  <fleet>          organization/fleet, a fleet name, or the fleet's numeric id
  --compose FILE   the compose file (required)
  --draft          make a draft release
  --note TEXT      the release note

Exit codes: 0 the release is made, 1 it failed or the API refused, 2 bad usage, 130 Ctrl-C.`,
  async run(args, io) {
    const { values, positionals } = parseCommand(args, options, { min: 1, max: 1, names: "the fleet" });
    const composeOption = nonEmpty(values.compose, "compose");
    if (composeOption === undefined) throw new UsageError("--compose FILE is required");
    const note = nonEmpty(values.note, "note");
    const file = path.resolve(io.cwd, composeOption);
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new CliError(
        code === "ENOENT"
          ? `${composeOption}: no such file`
          : `Cannot read ${composeOption}: ${(error as Error).message}`,
      );
    }
    checkPrebuiltCompose(text, composeOption);
    const session = await openSession(io.env);
    const fleet = await resolveFleet(session.sdk, positionals[0] ?? "");
    const archive = await packFiles([{ name: "docker-compose.yml", content: text }]);
    const result = await sendBuild(
      session,
      fleet,
      archive,
      { ...(values.draft ? { draft: true } : {}), ...(note !== undefined ? { note } : {}) },
      io,
    );
    await session.save();
    return result.status === "success" ? 0 : 1;
  },
};
