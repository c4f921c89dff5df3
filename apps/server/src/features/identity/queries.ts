import { SAML_PLAN_FEATURE } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";

type Db = Pick<Queryable, "query">;

import type { IdentityProvider } from "./saml.ts";

/** Whether the organization's current plan provides a feature (e.g. `saml`, spec 3 §6). */
export const planProvidesSql = (organization: string, featureSlug: string) =>
  `EXISTS (SELECT 1 FROM "subscription" s JOIN "plan_feature" pf ON pf.plan = s.is_for__plan JOIN "feature" f ON f.id = pf.feature
     WHERE s.is_for__organization = ${organization} AND s.starts_on__date <= now()
       AND (s.ends_on__date IS NULL OR s.ends_on__date > now()) AND f.slug = '${featureSlug}')`;

/**
 * The identity provider of an SSO identifier, if it may sign people in: at least one of its
 * organizations is on a plan with SAML. A provider whose organizations all left such plans
 * answers as unknown.
 */
export async function usableProvider(db: Db, ssoIdentifier: string): Promise<IdentityProvider | undefined> {
  return (await providerBySso(db, ssoIdentifier))?.usable;
}

/**
 * The provider of an SSO identifier: `usable` when it may sign people in, else only that it
 * exists (its organizations lost SAML with their plan), so the sign-in page can say so.
 */
export async function providerBySso(
  db: Db,
  ssoIdentifier: string,
): Promise<{ usable: IdentityProvider | undefined } | undefined> {
  const { rows } = await db.query<IdentityProvider>(
    `SELECT i.id, i.sso_identifier, i.entry_point, i.issuer, i.certificate, i.requires_signed_authn_response
       FROM "identity_provider" i
      WHERE i.sso_identifier = $1`,
    [ssoIdentifier],
  );
  const provider = rows[0];
  if (!provider) return undefined;
  const { rows: usable } = await db.query(
    `SELECT 1 FROM "identity_provider_membership" ipm
      WHERE ipm.is_authorized_by__identity_provider = $1 AND ${planProvidesSql("ipm.organization", SAML_PLAN_FEATURE)}`,
    [provider.id],
  );
  return { usable: usable.length > 0 ? provider : undefined };
}
