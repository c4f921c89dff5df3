import type { AdminUser, AdminUsersPage, GlobalRole } from "@flotilla/domain";
import type { Sdk } from "../../lib/sdk.ts";
import { accountRequest } from "../auth/api.ts";

/**
 * Platform administration (docs/support.md "Platform staff"): the installation's users with their
 * global roles, and granting and removing them. The calls go through `accountRequest`, whose
 * errors keep the answer's code, so a change answered `auth_expired` asks for the password again
 * (auth/reauth.tsx) and the last administrator's refusal shows the server's words.
 */

export type RoleFilter = GlobalRole | "any" | "";

export interface AdminUsersQuery {
  search: string;
  role: RoleFilter;
  page: number;
  pageSize: number;
}

export const adminKeys = {
  all: ["admin"] as const,
  users: (query: AdminUsersQuery) => ["admin", "users", query] as const,
};

/** The list's query string: empty fields left out. */
export function usersQueryString(query: AdminUsersQuery): string {
  const params = new URLSearchParams();
  if (query.search.trim()) params.set("search", query.search.trim());
  if (query.role) params.set("role", query.role);
  params.set("limit", String(query.pageSize));
  params.set("offset", String(query.page * query.pageSize));
  return params.toString();
}

export function adminApi(sdk: Sdk, apiUrl: string) {
  return {
    users: (query: AdminUsersQuery) =>
      accountRequest<AdminUsersPage>(sdk, apiUrl, {
        method: "GET",
        path: `/admin/v1/users?${usersQueryString(query)}`,
      }),
    grant: (user: number, role: GlobalRole) =>
      accountRequest<{ changed: boolean; user: AdminUser }>(sdk, apiUrl, {
        method: "POST",
        path: `/admin/v1/users/${user}/roles`,
        body: { role },
      }),
    revoke: (user: number, role: GlobalRole) =>
      accountRequest<{ changed: boolean; user: AdminUser }>(sdk, apiUrl, {
        method: "DELETE",
        path: `/admin/v1/users/${user}/roles/${role}`,
      }),
  };
}
