import crypto from "node:crypto";
import { APPLICATION_CLASSES, type ApplicationClass, fleetName, nameTakenText } from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import { parseInput } from "../../lib/validation.ts";
import type { ResourceHooks } from "../../odata/index.ts";

const DEFAULT_APPLICATION_TYPE = "microservices";

/**
 * Fleets, apps and blocks written through the data API (balena-sdk `application.create`,
 * `rename`, `remove`): server-chosen fields, the spec's name rules, and the fleet's actor.
 */
export const applicationHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    body.app_name = parseInput(fleetName, body.app_name);
    const applicationClass = (body.is_of__class ?? "fleet") as ApplicationClass;
    if (!APPLICATION_CLASSES.includes(applicationClass)) {
      throw new FlotillaError("bad_request", `"is_of__class" must be one of ${APPLICATION_CLASSES.join(", ")}`);
    }
    const { rows: organizations } = await tx.query<{ handle: string }>(
      'SELECT handle FROM "organization" WHERE id = $1',
      [body.organization],
    );
    const handle = organizations[0]?.handle;
    // A missing organization is refused by the create permission check too; say it plainly here.
    if (handle === undefined) throw new FlotillaError("bad_request", '"organization" does not exist');
    await refuseTakenName(tx, Number(body.organization), String(body.app_name), applicationClass);
    if (body.application_type === undefined) {
      const { rows } = await tx.query<{ id: number }>('SELECT id FROM "application_type" WHERE slug = $1', [
        DEFAULT_APPLICATION_TYPE,
      ]);
      body.application_type = rows[0]?.id;
    }
    const { rows: actors } = await tx.query<{ id: number }>('INSERT INTO "actor" DEFAULT VALUES RETURNING id');
    body.actor = actors[0]?.id;
    body.uuid = crypto.randomBytes(16).toString("hex");
    body.slug = `${handle}/${String(body.app_name)}`.toLowerCase();
    body.is_of__class = applicationClass;
  },

  async beforeUpdate({ tx, ids, body }) {
    if (body.app_name === undefined) return;
    body.app_name = parseInput(fleetName, body.app_name);
    if (ids.length !== 1) throw new FlotillaError("bad_request", "Rename one fleet at a time");
    const { rows } = await tx.query<{ organization: number; is_of__class: ApplicationClass; handle: string }>(
      `SELECT a.organization, a.is_of__class, o.handle FROM "application" a JOIN "organization" o ON o.id = a.organization WHERE a.id = $1`,
      [ids[0]],
    );
    const fleet = rows[0];
    if (!fleet) return;
    await refuseTakenName(tx, fleet.organization, String(body.app_name), fleet.is_of__class, ids[0]);
    body.slug = `${fleet.handle}/${String(body.app_name)}`.toLowerCase();
  },

  async beforeDelete({ tx, ids }) {
    // Devices go with their fleet (spec 2: deleting a fleet also removes its devices), and so do
    // the devices' actors, whose API keys cascade from them.
    const { rows } = await tx.query<{ actor: number }>(
      'DELETE FROM "device" WHERE belongs_to__application = ANY($1) RETURNING actor',
      [ids],
    );
    if (rows.length > 0) await tx.query('DELETE FROM "actor" WHERE id = ANY($1)', [rows.map((r) => r.actor)]);
  },

  async afterDelete({ tx, rows }) {
    await tx.query('DELETE FROM "actor" WHERE id = ANY($1)', [rows.map((r) => r.actor)]);
  },
};

async function refuseTakenName(
  tx: { query: (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }> },
  organization: number,
  name: string,
  applicationClass: ApplicationClass,
  exceptId?: number,
) {
  const { rows } = await tx.query(
    'SELECT 1 FROM "application" WHERE organization = $1 AND lower(app_name) = lower($2) AND id IS DISTINCT FROM $3',
    [organization, name, exceptId ?? null],
  );
  if (rows.length > 0) throw new FlotillaError("conflict", nameTakenText(applicationClass));
}
