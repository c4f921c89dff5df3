import { expect } from "vitest";
import type { TestApp } from "../harness.ts";
import { client } from "./accounts.ts";
import type { TestDnsServer } from "./dns-server.ts";

/** An organization's domain as GET/POST /identity/v1/organizations/{org}/domains answer it. */
export type DomainAnswer = {
  id: number;
  organization: number;
  domain: string;
  state: "pending" | "verified" | "failed";
  verification_record: string;
  verified_at: string | null;
  last_checked_at: string | null;
  last_check_error: string | null;
};

/** The domain API of a test app, as an organization's administrator calls it. */
export function domainsApi(t: TestApp) {
  const api = client(t);
  const base = (org: number) => `/identity/v1/organizations/${org}/domains`;
  return {
    list: (token: string, org: number) => api.get(base(org), token),
    add: (token: string, org: number, domain: unknown) => api.post(base(org), { domain }, token),
    verify: (token: string, org: number, id: number) => api.post(`${base(org)}/${id}/verify`, {}, token),
    remove: (token: string, org: number, id: number) => api.del(`${base(org)}/${id}`, token),
    /** Adds the domain, publishes its TXT record on the test DNS server and checks it: verified. */
    async verifyDomain(token: string, org: number, domain: string, dns: TestDnsServer): Promise<DomainAnswer> {
      const added = await api.post(base(org), { domain }, token);
      expect(added.status, added.text).toBe(201);
      const row = added.json as unknown as DomainAnswer;
      dns.setTxt(domain, [row.verification_record]);
      const checked = await api.post(`${base(org)}/${row.id}/verify`, {}, token);
      expect(checked.status, checked.text).toBe(200);
      expect(checked.json).toMatchObject({ domain, state: "verified", last_check_error: null });
      return checked.json as unknown as DomainAnswer;
    },
  };
}
