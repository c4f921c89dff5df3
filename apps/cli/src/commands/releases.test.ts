import { describe, expect, it } from "vitest";
import { checkPrebuiltCompose } from "./deploy.ts";
import { releaseTable } from "./releases.ts";

describe("releaseTable", () => {
  it("lines up id, version, commit, status and date; marks drafts and stale builds", () => {
    const now = Date.parse("2025-01-02T10:00:00Z");
    const table = releaseTable(
      [
        {
          id: 12,
          raw_version: "1.0.0",
          commit: "0123456789abcdef",
          status: "running",
          created_at: "2025-01-02T09:00:00Z",
          update_timestamp: "2025-01-02T09:00:00Z",
          is_final: true,
        },
        {
          id: 9,
          raw_version: "0.0.0",
          commit: "fedcba9876543210",
          status: "success",
          created_at: "2025-01-01T08:00:00Z",
          is_final: false,
        },
      ],
      now,
    ).split("\n");
    expect(table[0]).toMatch(/^ID {2}VERSION {8}COMMIT {3}STATUS {3}CREATED$/);
    expect(table[1]).toMatch(/^12 {2}1\.0\.0 {10}0123456 {2}timeout {2}2025-01-0\d \d\d:\d\d$/);
    expect(table[2]).toMatch(/^ 9 {2}0\.0\.0 \(draft\) {2}fedcba9 {2}success {2}/);
  });
});

describe("checkPrebuiltCompose", () => {
  it("accepts prebuilt images and names the services", () => {
    expect(
      checkPrebuiltCompose(
        "services:\n  main:\n    image: nginx:1.27-alpine\n  worker:\n    image: redis:7\n",
        "c.yml",
      ),
    ).toEqual(["main", "worker"]);
  });

  it("refuses build:, a missing image, no services and bad YAML with the file and the reason", () => {
    expect(() => checkPrebuiltCompose("services:\n  a:\n    build: .\n  b:\n    build: ./b\n", "c.yml")).toThrow(
      'c.yml: services "a", "b" have build: — deploy releases prebuilt images only; use flotilla push to build from source',
    );
    expect(() => checkPrebuiltCompose("services:\n  a:\n    ports: ['80:80']\n", "c.yml")).toThrow(
      'service "a" has no image',
    );
    expect(() => checkPrebuiltCompose("version: '2'\n", "c.yml")).toThrow("c.yml has no services");
    expect(() => checkPrebuiltCompose("services:\n  a: [\n", "c.yml")).toThrow(
      /^c\.yml is not valid YAML \(line \d+\): /,
    );
  });
});
