import readline from "node:readline";
import { CliError } from "./errors.ts";

/**
 * Questions on the terminal (prompts go to stderr, so stdout holds only results). A secret is
 * read in raw mode and never echoed. When stdin is not a terminal, answers are read as lines
 * from it (`printf 'me@example.com\nsecret\n' | flotilla login`).
 */

let lines: AsyncIterator<string> | undefined;

async function readLine(question: string): Promise<string> {
  process.stderr.write(question);
  lines ??= readline.createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
  const next = await lines.next();
  if (next.done) throw new CliError(`No answer to "${question.trim()}" (stdin ended)`);
  return next.value;
}

export async function ask(question: string): Promise<string> {
  if (!process.stdin.isTTY) return (await readLine(question)).trim();
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return (
      await new Promise<string>((resolve, reject) => {
        rl.once("SIGINT", () => reject(new CliError("Cancelled", 130)));
        rl.question(question, resolve);
      })
    ).trim();
  } finally {
    rl.close();
  }
}

export async function askSecret(question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return readLine(question);
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  let answer = "";
  try {
    return await new Promise<string>((resolve, reject) => {
      const onData = (data: Buffer) => {
        for (const char of data.toString("utf8")) {
          if (char === "\r" || char === "\n") {
            stdin.off("data", onData);
            return resolve(answer);
          }
          if (char === "\u0003") {
            stdin.off("data", onData);
            return reject(new CliError("Cancelled", 130));
          }
          if (char === "\u0004" && answer === "") {
            stdin.off("data", onData);
            return reject(new CliError("Cancelled", 130));
          }
          if (char === "\u007f" || char === "\b") answer = answer.slice(0, -1);
          else if (char >= " ") answer += char;
        }
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write("\n");
  }
}
