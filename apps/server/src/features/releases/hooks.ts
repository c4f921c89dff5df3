import { isFailedTypeRelease } from "@flotilla/domain";
import { FlotillaError, inBalenaWords } from "../../errors.ts";
import { RELEASE_RULES } from "../../model/releases.ts";
import type { WriteValues } from "../../odata/compile-write.ts";
import type { HookContext, ResourceHooks } from "../../odata/index.ts";
import type { DeviceServices } from "../devices/services.ts";
import { triggerUpdates } from "../variables/update-trigger.ts";
import { removeAssets } from "./assets.ts";
import { checkCreator, parseContract, refuseCreatorChange, splitSemver } from "./client-releases.ts";
import { assignRevisions } from "./queries.ts";
import { rollOut } from "./rollout.ts";

/** Release rules of spec 2 §4 (docs/releases.md "Release rules") and the rollout they start. */

type Devices = Pick<DeviceServices, "invalidate" | "relay" | "rolloutsStarted">;
type Tx = HookContext["tx"];

const fleetsOf = async (tx: Tx, releases: number[]) => {
  const { rows } = await tx.query<{ fleet: number }>(
    `SELECT DISTINCT belongs_to__application AS fleet FROM "release" WHERE id = ANY($1::bigint[])`,
    [releases],
  );
  return rows.map((row) => Number(row.fleet));
};

/** Finalizing is one way; it stamps the date and numbers the release among its version's repeats. */
async function stampFinalized(tx: Tx, ids: number[]) {
  await tx.query(
    `UPDATE "release" SET "is_finalized_at__date" = now()
      WHERE "id" = ANY($1::bigint[]) AND "is_final" AND "is_finalized_at__date" IS NULL`,
    [ids],
  );
  await assignRevisions(tx, ids);
}

/** A version is x.y.z with whole numbers of 0 and up ("-1.1.0" is no version). */
function checkVersion(body: WriteValues) {
  for (const part of ["semver_major", "semver_minor", "semver_patch"] as const) {
    const value = body[part];
    if (value !== undefined && value !== null && (!Number.isInteger(value) || (value as number) < 0)) {
      throw new FlotillaError("bad_request", `${part} must be a whole number of 0 or more`);
    }
  }
}

async function checkReleaseUpdate(tx: Tx, ids: number[], body: WriteValues) {
  checkVersion(body);
  if (body.is_final === undefined && body.is_invalidated !== false) return;
  const { rows } = await tx.query<{ is_final: boolean; status: string }>(
    `SELECT is_final, status FROM "release" WHERE id = ANY($1::bigint[])`,
    [ids],
  );
  if (body.is_final === false && rows.some((r) => r.is_final)) throw new FlotillaError("cannot_unfinalize");
  if (body.is_final === true && rows.some((r) => r.is_final)) throw new FlotillaError("already_finalized");
  if (body.is_invalidated === false && rows.some((r) => isFailedTypeRelease(r.status))) {
    throw new FlotillaError("cannot_validate_failed_releases");
  }
}

export function releaseHooks(devices: Devices, dataDir: string): ResourceHooks {
  return {
    async beforeCreate(args) {
      // A release created without saying is final, as on balena; drafts say `is_final: false`.
      if (args.body.is_final === undefined || args.body.is_final === null) args.body.is_final = true;
      splitSemver(args.body);
      parseContract(args.body);
      checkVersion(args.body);
      await checkCreator(args, args.body);
    },
    async afterCreate({ tx, id, body, afterCommit }) {
      if (body.is_final === true) await stampFinalized(tx, [id]);
      if (body.status === "success") await rollOut(tx, devices, afterCommit, { fleets: await fleetsOf(tx, [id]) });
    },
    async beforeUpdate({ tx, ids, body }) {
      splitSemver(body);
      parseContract(body);
      refuseCreatorChange(body);
      await checkReleaseUpdate(tx, ids, body);
    },
    async afterUpdate({ tx, ids, body, afterCommit }) {
      if (body.is_final === true) await stampFinalized(tx, ids);
      // A release that became (or stopped being) a candidate moves the fleets that track the latest.
      if (body.is_final !== undefined || body.is_invalidated !== undefined || body.status !== undefined) {
        await rollOut(tx, devices, afterCommit, { fleets: await fleetsOf(tx, ids) });
      }
    },
    async beforeDelete({ tx, ids, afterCommit }) {
      const { rows } = await tx.query(
        `SELECT 1 FROM "application" WHERE should_be_running__release = ANY($1::bigint[])
         UNION ALL SELECT 1 FROM "device" WHERE is_pinned_on__release = ANY($1::bigint[])
         -- A rollout in effect sends its devices to one of its two releases.
         UNION ALL SELECT 1 FROM "rollout" WHERE is_in_effect AND status <> 'completed'
           AND (from__release = ANY($1::bigint[]) OR to__release = ANY($1::bigint[])) LIMIT 1`,
        [ids],
      );
      if (rows.length > 0) throw new FlotillaError("cannot_delete_pinned_releases");
      const { rows: assets } = await tx.query<{ id: number }>(
        `SELECT id FROM "release_asset" WHERE release = ANY($1::bigint[])`,
        [ids],
      );
      afterCommit(() =>
        removeAssets(
          dataDir,
          assets.map((asset) => Number(asset.id)),
        ).then(() => undefined),
      );
    },
  };
}

/** A removed release asset takes its file with it, once the removal committed. */
export const releaseAssetHooks = (dataDir: string): ResourceHooks => ({
  afterDelete({ ids, afterCommit }) {
    afterCommit(() => removeAssets(dataDir, ids).then(() => undefined));
  },
});

/**
 * A fleet or a device may only be pinned to a successful, valid release (spec 2 §4). The API
 * answers with balena's rule of the pin (RELEASE_RULES), the dashboard with the spec's text.
 */
async function checkSelectable(tx: Tx, release: unknown, pinned: keyof typeof RELEASE_RULES) {
  if (release === null || release === undefined) return;
  const { rows } = await tx.query<{ status: string; is_invalidated: boolean }>(
    `SELECT status, is_invalidated FROM "release" WHERE id = $1`,
    [Number(release)],
  );
  const found = rows[0];
  if (found && (found.is_invalidated || found.status !== "success")) {
    throw inBalenaWords("release_not_selectable", RELEASE_RULES[pinned], { release: String(release) });
  }
}

/** Fleet pins and tracking: checked, and the fleet's devices hear of a new target at once. */
export function fleetReleaseHooks(devices: Devices): ResourceHooks {
  return {
    async beforeUpdate({ tx, body }) {
      await checkSelectable(tx, body.should_be_running__release, "fleet");
      // "Track latest" (balena-sdk's trackLatestRelease names the latest release too): the fleet
      // follows the latest itself below, so it moves as a tracking fleet does, through its
      // release policy (docs/rollouts.md) rather than as a pin.
      if (body.should_track_latest_release === true && body.should_be_running__release != null) {
        delete body.should_be_running__release;
      }
    },
    async afterUpdate({ tx, ids, body, afterCommit }) {
      const tracking = body.should_track_latest_release === true;
      if (!tracking && body.should_be_running__release === undefined) return;
      const pinned = body.should_be_running__release === undefined ? [] : ids;
      await rollOut(tx, devices, afterCommit, { fleets: tracking ? ids : [], changed: ids, pinned });
    },
  };
}

/** Device pins: checked, and the pinned (or unpinned) devices told to update at once. */
export function devicePinHooks(devices: Devices): ResourceHooks {
  return {
    async beforeUpdate({ tx, body }) {
      await checkSelectable(tx, body.is_pinned_on__release, "device");
    },
    afterUpdate({ ids, body, afterCommit }) {
      if (body.is_pinned_on__release === undefined) return;
      // The data API drops their target states; this wakes them to fetch it.
      afterCommit(() => triggerUpdates(devices.relay, ids));
    },
  };
}
