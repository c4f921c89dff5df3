import { parseCommand } from "../args.ts";
import { CliError } from "../errors.ts";
import type { Command } from "../io.ts";
import { openSession } from "../sdk.ts";
import { describeActor } from "./login.ts";

export const whoami: Command = {
  name: "whoami",
  summary: "show who you are logged in as, and where",
  usage: `Usage: flotilla whoami

Prints the account (or key) of the saved login and its API.`,
  async run(args, io) {
    parseCommand(args, {}, { min: 0, max: 0, names: "" });
    const session = await openSession(io.env);
    const actor = await session.sdk.auth.whoami();
    if (!actor) throw new CliError("Not logged in, or the session expired: run flotilla login");
    await session.save();
    io.out(`${describeActor(actor)} at ${session.apiUrl}`);
    return 0;
  },
};
