import pino, { type Logger } from "pino";
import pretty from "pino-pretty";
import type { Config } from "../config.ts";

const BOLD = "\u001b[1m";
const RESET = "\u001b[22m";

/**
 * The server's log: readable lines (time, level, message) in a terminal, JSON lines otherwise or
 * with LOG_FORMAT=json, for log collectors. A line logged with `highlight: true` (the URLs, the
 * demo password) stands out in bold.
 */
export function createLogger(config: Pick<Config, "logLevel" | "logFormat">): Logger {
  if (config.logFormat === "json") return pino({ level: config.logLevel });
  const colour = Boolean(process.stdout.isTTY);
  const stream = pretty({
    colorize: colour,
    sync: true,
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname,highlight,apiPort,dashboardPort,database",
    messageFormat: (log, key) => {
      const message = String(log[key] ?? "");
      return log.highlight && colour ? `${BOLD}${message}${RESET}` : message;
    },
  });
  return pino({ level: config.logLevel }, stream);
}
