import { describe, expect, it } from "vitest";
import { parseGatewayCommand } from "./commands.ts";

const uuid = "a".repeat(32);

describe("the SSH gateway's command grammar", () => {
  it("opens the host shell with balena-cli's `host {uuid}`, with or without a command", () => {
    expect(parseGatewayCommand(`host ${uuid}`)).toEqual({ kind: "shell", uuid, target: "host", command: undefined });
    expect(parseGatewayCommand(`host ${uuid.toUpperCase()}  uptime;  exit`)).toEqual({
      kind: "shell",
      uuid,
      target: "host",
      command: "uptime;  exit",
    });
  });

  it("answers balena-cli's container listing itself, and enters a service by its container", () => {
    const listing = `host ${uuid} "$(if [ -f /usr/bin/balena ]; then echo "balena"; else echo "docker"; fi)" ps --format "{{.ID}} {{.Names}}"`;
    expect(parseGatewayCommand(listing)).toEqual({ kind: "list-containers", uuid });
    expect(parseGatewayCommand(`host ${uuid} docker ps --format "{{.ID}} {{.Names}}"`).kind).toBe("list-containers");
    expect(parseGatewayCommand(`enter ${uuid} main`)).toEqual({
      kind: "shell",
      uuid,
      target: "main",
      command: undefined,
    });
  });

  it("takes `{uuid} [service]` typed by hand", () => {
    expect(parseGatewayCommand(uuid)).toEqual({ kind: "shell", uuid, target: "host", command: undefined });
    expect(parseGatewayCommand(`${uuid} worker`)).toEqual({
      kind: "shell",
      uuid,
      target: "worker",
      command: undefined,
    });
  });

  it("names what is wrong with anything else", () => {
    expect(parseGatewayCommand("")).toMatchObject({
      kind: "invalid",
      message: expect.stringContaining("No device named"),
    });
    expect(parseGatewayCommand("host nope")).toMatchObject({
      message: expect.stringContaining("Not a device uuid: nope"),
    });
    expect(parseGatewayCommand(`enter ${uuid}`)).toMatchObject({
      message: expect.stringContaining("No service named"),
    });
    expect(parseGatewayCommand("rm -rf /")).toMatchObject({ message: expect.stringContaining("Unknown command: rm") });
  });
});
