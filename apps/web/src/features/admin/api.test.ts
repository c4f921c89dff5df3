import { describe, expect, it } from "vitest";
import { usersQueryString } from "./api.ts";

describe("Admin → Users query", () => {
  it("asks the server for one page, the search trimmed and empty filters left out", () => {
    expect(usersQueryString({ search: "  ali ", role: "", page: 2, pageSize: 25 })).toBe(
      "search=ali&limit=25&offset=50",
    );
    expect(usersQueryString({ search: "", role: "any", page: 0, pageSize: 25 })).toBe("role=any&limit=25&offset=0");
    expect(usersQueryString({ search: "a&b=c", role: "support_agent", page: 0, pageSize: 10 })).toBe(
      "search=a%26b%3Dc&role=support_agent&limit=10&offset=0",
    );
  });
});
