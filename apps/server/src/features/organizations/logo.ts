import fs from "node:fs/promises";
import path from "node:path";
import { ORGANIZATION_LOGO_MAX_BYTES, parseDataUrl } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/** Sniffed from the first bytes: the Content-Type header alone proves nothing. */
function imageTypeOf(bytes: Buffer): "image/png" | "image/jpeg" | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  return undefined;
}

const logoDirectory = (dataDir: string) => path.join(dataDir, "storage", "organization-logos");

/** Deleted organizations leave no logo file behind (run after the deletion commits). */
export async function removeOrganizationLogos(dataDir: string, organizationIds: number[]) {
  await Promise.all(organizationIds.map((id) => fs.rm(path.join(logoDirectory(dataDir), String(id)), { force: true })));
}

type LogoImage = { href: string; filename: string; content_type: string; size: number };

/** Checks a logo's bytes (spec 3 §5: PNG or JPEG, at most 1,000,000 bytes); its type when good. */
function checkedLogo(bytes: Buffer, declared: string | undefined): "image/png" | "image/jpeg" {
  if (bytes.length === 0) throw new FlotillaError("logo_invalid");
  if (bytes.length > ORGANIZATION_LOGO_MAX_BYTES) throw new FlotillaError("logo_too_large");
  const actual = imageTypeOf(bytes);
  if (!actual || declared !== actual) throw new FlotillaError("logo_invalid");
  return actual;
}

/** Stores the logo's file and answers the organization's new `logo_image`. */
async function storeLogo(dataDir: string, id: number, bytes: Buffer, type: "image/png" | "image/jpeg") {
  const directory = logoDirectory(dataDir);
  await fs.mkdir(directory, { recursive: true });
  const file = path.join(directory, String(id));
  await fs.writeFile(`${file}.tmp`, bytes);
  await fs.rename(`${file}.tmp`, file);
  const logo: LogoImage = {
    href: `/organization/${id}/logo?v=${Date.now()}`,
    filename: type === "image/png" ? "logo.png" : "logo.jpg",
    content_type: type,
    size: bytes.length,
  };
  return logo;
}

/**
 * `POST` and `PATCH /v7/organization` with `logo_image` (spec 3 §7 "POST organization with name,
 * logo_image", "PATCH organization with name or logo_image"):
 * the logo comes as a data URL of type, name and base64 parts (spec 1 §5), is checked as an upload
 * is (`PUT /organization/{id}/logo`) and stored with the new organization; `null` means none.
 */
export function organizationLogoWriteHooks(dataDir: string): ResourceHooks {
  const pending = new WeakMap<object, { bytes: Buffer; type: "image/png" | "image/jpeg" }>();
  /** Takes the sent logo out of the body (stored by the after-hook); `null` stays: no logo. */
  const take = (body: Record<string, unknown>) => {
    const sent = body.logo_image;
    if (sent === undefined || sent === null) return false;
    const parts = typeof sent === "string" ? parseDataUrl(sent) : undefined;
    if (!parts) {
      throw new FlotillaError(
        "bad_request",
        "logo_image must be a data URL of the image's type, name and base64 content (data:image/png;name=logo.png;base64,…)",
      );
    }
    const bytes = Buffer.from(parts.base64, "base64");
    pending.set(body, { bytes, type: checkedLogo(bytes, parts.type.toLowerCase()) });
    body.logo_image = null;
    return true;
  };
  const store = async (tx: { query(text: string, values: unknown[]): Promise<unknown> }, body: object, id: number) => {
    const logo = pending.get(body);
    if (!logo) return;
    const stored = await storeLogo(dataDir, id, logo.bytes, logo.type);
    await tx.query('UPDATE "organization" SET logo_image = $2 WHERE id = $1', [id, JSON.stringify(stored)]);
  };
  return {
    beforeCreate({ body }) {
      take(body);
    },
    afterCreate: ({ tx, body, id }) => store(tx, body, id),
    beforeUpdate({ body, ids }) {
      if (take(body) && ids.length !== 1)
        throw new FlotillaError("bad_request", "Change one organization's logo at a time");
    },
    async afterUpdate({ tx, body, ids, afterCommit }) {
      const [id] = ids;
      if (id === undefined || body.logo_image === undefined) return;
      if (pending.has(body)) await store(tx, body, id);
      else afterCommit(() => removeOrganizationLogos(dataDir, ids));
    },
  };
}

/**
 * Organization logos (spec 3 §2, §5, §9), stored under `$FLOTILLA_DATA_DIR/storage/organization-logos/`:
 * - `PUT /organization/{id}/logo`, raw body `image/png` or `image/jpeg` (the bytes must be one),
 *   at most 1,000,000 bytes, administrators only → 200 `{logo_image}`; the organization's
 *   `logo_image` becomes `{href: "/organization/{id}/logo?v={time}", filename, content_type, size}`.
 * - `GET /organization/{id}/logo` (members): the image with its type, `Cache-Control: private, max-age=86400`
 *   (the `v` in the href changes with every upload); 404 when there is none.
 * - `DELETE /organization/{id}/logo` (administrators) → 200, `logo_image` back to null.
 */
export async function organizationLogoRoutes(app: FastifyInstance, { db, config }: AppContext) {
  const directory = logoDirectory(config.dataDir);
  // Every body type reaches the handler as bytes (so a GIF is answered with the logo's own error);
  // the limit leaves room to say "too large" in the logo's words, beyond it Fastify answers 413.
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: 2 * ORGANIZATION_LOGO_MAX_BYTES }, (_req, body, done) =>
    done(null, body),
  );

  const organizationIdOf = (request: FastifyRequest) => {
    const raw = (request.params as { id?: string }).id ?? "";
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    return Number(raw);
  };

  /** The caller's role in the organization; platform administrators count as administrators. 404 for outsiders. */
  async function roleIn(request: FastifyRequest, organization: number): Promise<"administrator" | "member"> {
    const user = requireUser(request);
    const { rows } = await db.query<{ name: string }>(
      `SELECT r.name FROM "organization_membership" m JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
        WHERE m."user" = $1 AND m.is_member_of__organization = $2`,
      [user.id, organization],
    );
    const { rows: exists } = await db.query('SELECT 1 FROM "organization" WHERE id = $1', [organization]);
    if (exists.length === 0) throw new FlotillaError("not_found");
    if (user.caller.globalRoles.includes("balena_admin")) return "administrator";
    const role = rows[0]?.name;
    if (role === undefined) throw new FlotillaError("not_found");
    return role === "administrator" ? "administrator" : "member";
  }

  app.put("/organization/:id/logo", async (request) => {
    const id = organizationIdOf(request);
    if ((await roleIn(request, id)) !== "administrator") throw new FlotillaError("forbidden");
    const body = request.body;
    if (!Buffer.isBuffer(body)) throw new FlotillaError("logo_invalid");
    const declared = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    const logo = await storeLogo(config.dataDir, id, body, checkedLogo(body, declared));
    await db.query('UPDATE "organization" SET logo_image = $2 WHERE id = $1', [id, JSON.stringify(logo)]);
    return { logo_image: logo };
  });

  app.get("/organization/:id/logo", async (request, reply) => {
    const id = organizationIdOf(request);
    await roleIn(request, id);
    const { rows } = await db.query<{ logo_image: LogoImage | string | null }>(
      'SELECT logo_image FROM "organization" WHERE id = $1',
      [id],
    );
    const raw = rows[0]?.logo_image;
    const logo: LogoImage | null = typeof raw === "string" ? JSON.parse(raw) : (raw ?? null);
    if (!logo) throw new FlotillaError("not_found");
    const bytes = await fs.readFile(path.join(directory, String(id))).catch(() => undefined);
    if (!bytes) throw new FlotillaError("not_found");
    return reply
      .type(logo.content_type)
      .header("cache-control", "private, max-age=86400")
      .header("x-content-type-options", "nosniff")
      .send(bytes);
  });

  app.delete("/organization/:id/logo", async (request) => {
    const id = organizationIdOf(request);
    if ((await roleIn(request, id)) !== "administrator") throw new FlotillaError("forbidden");
    await db.query('UPDATE "organization" SET logo_image = NULL WHERE id = $1', [id]);
    await fs.rm(path.join(directory, String(id)), { force: true });
    return {};
  });
}
