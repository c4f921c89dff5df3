import { parseCommand } from "../args.ts";
import { readConfig, writeConfig } from "../config.ts";
import type { Command } from "../io.ts";

export const logout: Command = {
  name: "logout",
  summary: "forget the saved login",
  usage: `Usage: flotilla logout

Removes the token from the config file (the API URL stays, as the default of the next login).`,
  async run(args, io) {
    parseCommand(args, {}, { min: 0, max: 0, names: "" });
    const saved = readConfig(io.env);
    if (!saved?.token) {
      io.out("Not logged in.");
      return 0;
    }
    writeConfig(io.env, { apiUrl: saved.apiUrl });
    io.out(`Logged out of ${saved.apiUrl}.`);
    return 0;
  },
};
