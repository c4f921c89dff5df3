import { describe, expect, it } from "vitest";
import { domainVerificationRecord, emailDomain, normalizeDomain } from "./identity.ts";

describe("normalizeDomain", () => {
  it("keeps a domain in lowercase ASCII without the trailing dot", () => {
    expect(normalizeDomain(" Example.COM. ")).toEqual({ domain: "example.com" });
    expect(normalizeDomain("mail.eu.example.co.uk")).toEqual({ domain: "mail.eu.example.co.uk" });
    expect(normalizeDomain("bücher.example")).toEqual({ domain: "xn--bcher-kva.example" });
  });

  it.each([
    ["", "This field is required"],
    ["ann@example.com", "Enter the domain only, without a name and @ (e.g. example.com)"],
    ["https://example.com", "Enter a domain name such as example.com, without https:// or a path"],
    ["example.com/login", "Enter a domain name such as example.com, without https:// or a path"],
    ["localhost", "Enter a full domain name such as example.com"],
    ["10.0.0.1", "Enter a domain name, not an IP address"],
    ["-bad.example.com", "Your entry contains invalid characters"],
    ["under_score.example.com", "Your entry contains invalid characters"],
    ["a..example.com", "Your entry contains invalid characters"],
    [`${"a".repeat(64)}.com`, "Each part of a domain name has at most 63 characters"],
    [`${"abcdefghi.".repeat(26)}com`, "A domain name has at most 253 characters"],
  ])("refuses %j: %s", (input, problem) => {
    expect(normalizeDomain(input)).toEqual({ problem });
  });
});

describe("emailDomain", () => {
  it("is the normalized part after the last @", () => {
    expect(emailDomain("Ann.Lee@Example.COM")).toBe("example.com");
    expect(emailDomain("no-at-sign")).toBeUndefined();
    expect(emailDomain("ann@localhost")).toBeUndefined();
  });
});

it("names the TXT record to publish", () => {
  expect(domainVerificationRecord("abc123")).toBe("flotilla-verification=abc123");
});
