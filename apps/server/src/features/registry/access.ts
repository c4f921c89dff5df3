import crypto from "node:crypto";
import type { Queryable } from "../../db/index.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { mayDo } from "../data-api/actions.ts";
import type { Access } from "./scopes.ts";

type Db = Pick<Queryable, "query">;

/**
 * Repository names (docs/operations.md "Image registry"): each image of a release gets its own
 * `v2/<32 hex>` repository, random so that a name tells nothing and cannot be guessed, stored in
 * the image's `is_stored_at__image_location` as `<registry host>/v2/<hex>` (optionally with a
 * `:tag` or `@digest`), as balena's registry names images.
 */
export const REPOSITORY = /^v2\/[0-9a-f]{32}$/;

export function newImageLocation(registryHost: string): string {
  return `${registryHost}/v2/${crypto.randomBytes(16).toString("hex")}`;
}

/** The fleet a repository belongs to, and the image it was named for (0 once that image is gone). */
type Owner = { image: number; fleet: number };

/**
 * A repository belongs, for good, to the fleet of the image the server named it for
 * (`claimRepository`): image rows naming the same location later (an `image:` service of a
 * compose file may name any location) cannot take it over, not even once the owner's images
 * are deleted, and a name is never given to another image.
 */
async function ownerOf(db: Db, name: string): Promise<Owner | undefined> {
  const { rows } = await db.query<{ image: number | null; fleet: number }>(
    `SELECT image, fleet FROM "registry_repository" WHERE name = $1 AND fleet IS NOT NULL`,
    [name],
  );
  const [row] = rows;
  return row && { image: Number(row.image ?? 0), fleet: Number(row.fleet) };
}

/** Records the repository the server named for an image (`newImageLocation`) as its fleet's. */
export async function claimRepository(db: Db, image: number): Promise<void> {
  await db.query(
    `INSERT INTO "registry_repository" (name, fleet, image)
     SELECT substring(i.is_stored_at__image_location FROM '/(v2/[0-9a-f]{32})$'), s.application, i.id
       FROM "image" i JOIN "service" s ON s.id = i.is_a_build_of__service
      WHERE i.id = $1 AND i.is_stored_at__image_location ~ '/v2/[0-9a-f]{32}$'`,
    [image],
  );
}

/** A device pulls its fleet's images, and those of the host OS and supervisor releases it should run. */
async function deviceMayPull(db: Db, deviceActor: number, owner: Owner): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM "device" d
      WHERE d.actor = $1
        AND (d.belongs_to__application = $2
             OR EXISTS (SELECT 1 FROM "release_image" ri WHERE ri.image = $3
                          AND ri.is_part_of__release IN (d.should_be_operated_by__release, d.should_be_managed_by__release)))`,
    [deviceActor, owner.fleet, owner.image],
  );
  return rows.length > 0;
}

/**
 * What the caller gets of each requested access: the requested actions it may have, nothing
 * otherwise (an empty action list, not an error, as the token protocol expects). A device pulls;
 * a user pulls what they may read and pushes where they may push releases. Other resource types
 * (the catalog) and unknown names get nothing.
 */
export async function grantAccess(db: Db, caller: Caller, requested: readonly Access[]): Promise<Access[]> {
  const granted: Access[] = [];
  for (const access of requested) {
    const actions: string[] = [];
    const owner =
      access.type === "repository" && REPOSITORY.test(access.name) ? await ownerOf(db, access.name) : undefined;
    if (owner) {
      const wantsPull = access.actions.includes("pull");
      const wantsPush = access.actions.includes("push");
      if (caller.apiKey?.role === "device-api-key") {
        if (wantsPull && (await deviceMayPull(db, caller.actor, owner))) actions.push("pull");
      } else if (caller.user) {
        if (wantsPull && (await mayDo(db, caller, "image.read", { fleet: owner.fleet }))) actions.push("pull");
        if (wantsPush && (await mayDo(db, caller, "application.push", { fleet: owner.fleet }))) actions.push("push");
      }
    }
    if (actions.length > 0) granted.push({ type: access.type, name: access.name, actions });
  }
  return granted;
}
