import { FlotillaError } from "../../errors.ts";
import type { WriteValues } from "../../odata/compile-write.ts";
import type { HookContext, ResourceHooks } from "../../odata/index.ts";
import { claimRepository, newImageLocation } from "../registry/access.ts";
import { composedImageOfService, nameImageLocation, unnamedReleaseImages } from "./queries.ts";

/**
 * Releases and images that clients create through /v7, as `balena deploy` (balena-cli with
 * @balena/compose's release module) and balena-release do: the release with its `semver` as one
 * string, `contract` as stringified JSON and the creating user; each image with the registry
 * location the server chooses, pushed to by the client with a token from /auth/v1/token.
 */

const SEMVER =
  /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-([0-9A-Za-z.-]{1,100}))?(?:\+([0-9A-Za-z.-]{1,100}))?$/;

/** `semver: "1.2.3-beta+b4"` becomes its parts; the computed `semver` itself is never stored. */
export function splitSemver(body: WriteValues) {
  if (!("semver" in body)) return;
  const text = body.semver;
  delete body.semver;
  if (text === undefined || text === null) return;
  const match = typeof text === "string" ? SEMVER.exec(text.trim()) : null;
  if (!match)
    throw new FlotillaError("bad_request", `semver must be a version like 1.2.3 (got ${JSON.stringify(text)})`);
  const [, major, minor, patch, prerelease, build] = match;
  for (const [name, part] of [
    ["semver_major", Number(major)],
    ["semver_minor", Number(minor)],
    ["semver_patch", Number(patch)],
    ["semver_prerelease", prerelease ?? ""],
    ["semver_build", build ?? ""],
  ] as const) {
    if (name in body && body[name] !== part) throw new FlotillaError("bad_request", `semver and ${name} disagree`);
    body[name] = part;
  }
}

/** balena-release sends the contract as stringified JSON, balena-cli as an object: both are kept as JSON. */
export function parseContract(body: WriteValues) {
  if (typeof body.contract !== "string") return;
  try {
    body.contract = JSON.parse(body.contract);
  } catch {
    throw new FlotillaError("bad_request", "contract must be a JSON object or a string of one");
  }
  if (body.contract === null || typeof body.contract !== "object" || Array.isArray(body.contract)) {
    throw new FlotillaError("bad_request", "contract must be a JSON object or a string of one");
  }
}

/**
 * `is_created_by__user` names the caller (balena-cli sends the id `whoami` gave it), or is
 * filled with the caller when a user creates the release; it never names someone else.
 */
export async function checkCreator({ tx, actorId }: Pick<HookContext, "tx" | "actorId">, body: WriteValues) {
  const { rows } = await tx.query<{ id: number }>(`SELECT id FROM "user" WHERE actor = $1`, [actorId ?? 0]);
  const caller = rows[0] ? Number(rows[0].id) : undefined;
  const named = body.is_created_by__user;
  if (named === undefined || named === null) {
    if (caller !== undefined) body.is_created_by__user = caller;
    return;
  }
  if (named !== caller)
    throw new FlotillaError("bad_request", "is_created_by__user must be the user creating the release");
}

export function refuseCreatorChange(body: WriteValues) {
  if (body.is_created_by__user !== undefined) {
    throw new FlotillaError("bad_request", "is_created_by__user of a release cannot be changed");
  }
}

/**
 * With a registry (FLOTILLA_REGISTRY_URL), an image's location is the server's choice, a new
 * repository of that registry, as balena's API chooses it: the client pushes there. Without one,
 * an image is created as balena-cli's deploy and balena-sdk's fixtures create it: a location the
 * client gives is kept (a prebuilt reference); else it names the image as the compose file gives
 * it for an `image:` service (the fleet's newest release naming the service, then the release the
 * image joins); else it is empty ("": a record without a pullable image, as the SDK's fixtures).
 */
export function imageLocationHooks(registryHost: string | undefined): ResourceHooks {
  return {
    async beforeCreate({ tx, body }) {
      if (registryHost) {
        body.is_stored_at__image_location = newImageLocation(registryHost);
        return;
      }
      const given = body.is_stored_at__image_location;
      if (typeof given === "string" && given !== "") return;
      const service = Number(body.is_a_build_of__service);
      const composed = Number.isInteger(service) ? await composedImageOfService(tx, service) : undefined;
      body.is_stored_at__image_location = composed ?? "";
    },
    async afterCreate({ tx, id }) {
      if (registryHost) await claimRepository(tx, id);
    },
    beforeUpdate({ body }) {
      if (registryHost && body.is_stored_at__image_location !== undefined) {
        throw new FlotillaError("bad_request", "is_stored_at__image_location is chosen by the server");
      }
    },
  };
}

/** An image with an empty location that joins a release takes the one the release's compose file gives it. */
export const releaseImageLocationHooks: ResourceHooks = {
  async afterCreate({ tx, id }) {
    for (const row of await unnamedReleaseImages(tx, [id])) {
      const composed = await composedImageOfService(tx, row.service, row.release);
      if (composed) await nameImageLocation(tx, row.image, composed);
    }
  },
};
