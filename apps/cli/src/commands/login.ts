import { spawn } from "node:child_process";
import type { BalenaSDK, WhoamiResult } from "balena-sdk";
import { apiUrlOption, nonEmpty, parseCommand } from "../args.ts";
import { DEFAULT_API_URL, readConfig, writeConfig } from "../config.ts";
import { CliError, describeError, UsageError } from "../errors.ts";
import type { Command, Io } from "../io.ts";
import { ask, askSecret } from "../prompt.ts";
import { createSdk } from "../sdk.ts";
import { dashboardLoginUrl, startWebLogin } from "../web-login.ts";

const options = {
  api: { type: "string" },
  email: { type: "string" },
  password: { type: "string" },
  code: { type: "string" },
  token: { type: "string" },
  web: { type: "boolean" },
  dashboard: { type: "string" },
} as const;

/** "alice (alice@example.com)", or what a fleet's or device's key stands for. */
export function describeActor(actor: WhoamiResult): string {
  switch (actor.actorType) {
    case "user":
      return actor.email ? `${actor.username} (${actor.email})` : actor.username;
    case "application":
      return `the fleet ${actor.slug}`;
    case "device":
      return `the device ${actor.uuid}`;
  }
}

/** Who `token` belongs to on the SDK's API; a CliError when the API refuses it. */
export async function verifyToken(sdk: BalenaSDK, token: string): Promise<WhoamiResult> {
  await sdk.auth.loginWithToken(token);
  const actor = await sdk.auth.whoami();
  if (!actor) throw new CliError("The token was not accepted: it is unknown or has expired");
  return actor;
}

async function passwordLogin(sdk: BalenaSDK, values: { email?: string; password?: string; code?: string }) {
  const email = nonEmpty(values.email, "email") ?? (await ask("Email: "));
  if (!email) throw new CliError("An email is needed to log in");
  const password = values.password ?? (await askSecret("Password: "));
  if (!password) throw new CliError("A password is needed to log in");
  await sdk.auth.login({ email, password });
  if (!(await sdk.auth.twoFactor.isPassed())) {
    const code = values.code ?? (await ask("Two-factor code: "));
    await sdk.auth.twoFactor.challenge(code.replace(/\s+/g, ""));
  }
  return sdk.auth.getToken();
}

/** Opens `url` in the desktop's browser when there is one; the URL is printed either way. */
function openBrowser(url: string, io: Io) {
  if (!process.stdout.isTTY || io.env.FLOTILLA_NO_BROWSER) return;
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", '""', url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // no browser here: the printed URL is the way
  }
}

async function webLogin(sdk: BalenaSDK, apiUrl: string, dashboardOption: string | undefined, io: Io) {
  const dashboard = dashboardOption
    ? apiUrlOption(dashboardOption)
    : (await sdk.models.config.getAll()).adminUrl?.replace(/\/+$/, "");
  if (!dashboard) throw new CliError("The API does not say where its dashboard is: give it with --dashboard URL");
  const checker = await createSdk(apiUrl);
  const login = await startWebLogin({
    verify: async (token) => describeActor(await verifyToken(checker, token)),
  });
  const url = dashboardLoginUrl(dashboard, login.callbackUrl);
  io.out(`Open this page to log in (waiting for the dashboard to hand over the session):\n  ${url}`);
  openBrowser(url, io);
  const onSigint = () => login.close();
  process.once("SIGINT", onSigint);
  try {
    return (await login.token).token;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

export const login: Command = {
  name: "login",
  summary: "log in to a Flotilla API (email and password, a token, or the browser)",
  usage: `Usage: flotilla login [--api URL] [--email EMAIL] [--password PASSWORD] [--code CODE]
       flotilla login [--api URL] --token KEY
       flotilla login [--api URL] --web [--dashboard URL]

Logs in and keeps the API URL and the token in the config file ($FLOTILLA_CONFIG_DIR or
~/.flotilla, config.json, readable by you only).

Options:
  --api URL          the Flotilla API (default: the one logged in to before, else ${DEFAULT_API_URL})
  --email EMAIL      your email (asked when missing)
  --password PASS    your password (asked without echo when missing)
  --code CODE        a two-factor code, when your account needs one (asked when missing)
  --token KEY        an API key or a session token instead of a password
  --web              log in through the dashboard in a browser: it hands this CLI a session
  --dashboard URL    the dashboard for --web (default: the one the API names)`,
  async run(args, io) {
    const { values } = parseCommand(args, options, { min: 0, max: 0, names: "" });
    const modes = [
      values.token !== undefined,
      values.web === true,
      values.email !== undefined || values.password !== undefined,
    ];
    if (modes.filter(Boolean).length > 1) throw new UsageError("use one of --token, --web or --email/--password");
    if (values.dashboard !== undefined && !values.web) throw new UsageError("--dashboard goes with --web");
    const apiUrl = values.api ? apiUrlOption(values.api) : (readConfig(io.env)?.apiUrl ?? DEFAULT_API_URL);
    const sdk = await createSdk(apiUrl);
    try {
      let token: string;
      if (values.token !== undefined) token = nonEmpty(values.token, "token") as string;
      else if (values.web) token = await webLogin(sdk, apiUrl, values.dashboard, io);
      else token = await passwordLogin(sdk, values);
      const actor = await verifyToken(sdk, token);
      const file = writeConfig(io.env, { apiUrl, token });
      io.out(`Logged in to ${apiUrl} as ${describeActor(actor)}; the login is kept in ${file}`);
      return 0;
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(describeError(error, apiUrl));
    }
  },
};
