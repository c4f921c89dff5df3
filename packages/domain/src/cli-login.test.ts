import { describe, expect, it } from "vitest";
import { canPostToCliCallback, isLoopbackCallback } from "./cli-login.ts";

describe("isLoopbackCallback", () => {
  it.each([
    // Loopback: localhost, 127.0.0.0/8, ::1 (in any spelling the URL parser normalises).
    ["http://127.0.0.1:8989/auth/abc", true],
    ["http://127.0.0.1/", true],
    ["http://127.255.255.254:1/x", true],
    ["http://127.1:5000/", true],
    ["http://0x7f.0.0.1:5000/", true],
    ["http://localhost:8989/callback", true],
    ["http://LOCALHOST:1/", true],
    ["https://localhost:4443/cb", true],
    ["http://[::1]:8000/", true],
    ["http://[0:0:0:0:0:0:0:1]:8000/", true],
    // Public and private addresses: never.
    ["http://203.0.113.7:8989/auth", false],
    ["http://8.8.8.8/auth", false],
    ["http://192.168.1.20/x", false],
    ["http://10.0.0.1:80/", false],
    ["http://0.0.0.0:8989/", false],
    ["http://128.0.0.1/", false],
    ["http://[::ffff:127.0.0.1]:80/", false],
    ["http://[::2]:80/", false],
    ["http://[fe80::1]:80/", false],
    // Names that only look local, credentials, other schemes, junk.
    ["http://evil.example/callback", false],
    ["http://localhost.evil.example/", false],
    ["http://127.0.0.1.evil.example/", false],
    ["http://user@localhost/", false],
    ["http://user:pw@127.0.0.1/", false],
    ["javascript:alert(1)", false],
    ["file:///etc/passwd", false],
    ["ftp://127.0.0.1/", false],
    ["not a url", false],
    ["", false],
  ])("%s → %s", (callback, allowed) => {
    expect(isLoopbackCallback(callback)).toBe(allowed);
  });

  it("posts only where the dashboard's CSP form-action reaches: localhost and 127.0.0.1", () => {
    expect(canPostToCliCallback("http://127.0.0.1:8989/auth/abc")).toBe(true);
    expect(canPostToCliCallback("http://127.1:8989/auth/abc")).toBe(true);
    expect(canPostToCliCallback("http://localhost:1/x")).toBe(true);
    expect(canPostToCliCallback("http://[::1]:8000/")).toBe(false);
    expect(canPostToCliCallback("http://127.0.0.2:8000/")).toBe(false);
    expect(canPostToCliCallback("http://203.0.113.7:8000/")).toBe(false);
    expect(canPostToCliCallback("not a url")).toBe(false);
  });
});
