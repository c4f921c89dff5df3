import { expect } from "vitest";

type Login = { email: string; password: string };

/**
 * Signs `agent` up and makes them a support agent as the platform administrator `root` would in
 * Admin → Users, through its API (POST /admin/v1/users/{id}/roles with a fresh session).
 */
export async function grantSupportAgent(apiUrl: string, agent: Login, root: Login): Promise<void> {
  const json = { "content-type": "application/json" };
  const registered = await fetch(`${apiUrl}/user/register`, {
    method: "POST",
    headers: json,
    body: JSON.stringify(agent),
  });
  expect(registered.status).toBe(200);
  const login = await fetch(`${apiUrl}/login_`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ username: root.email, password: root.password }),
  });
  expect(login.status).toBe(200);
  const auth = { authorization: `Bearer ${await login.text()}` };
  const found = await fetch(`${apiUrl}/admin/v1/users?search=${encodeURIComponent(agent.email)}`, { headers: auth });
  const { users } = (await found.json()) as { users: Array<{ id: number }> };
  const id = users[0]?.id;
  const granted = await fetch(`${apiUrl}/admin/v1/users/${id}/roles`, {
    method: "POST",
    headers: { ...auth, ...json },
    body: JSON.stringify({ role: "support_agent" }),
  });
  expect(granted.status).toBe(200);
}
