import { parse } from "shell-quote";

/**
 * A command line of the sandboxed shell as `sh -c` reads it, parsed with shell-quote (quoting,
 * escapes, `$VAR`, comments, operators): lists joined by `;`, `&&` and `||`, pipelines joined by
 * `|`, and each command's redirections (`>`, `>>`, `<`, `2>`, `2>&1`). Variables are left as
 * markers and expanded when their command runs, so `false; echo $?` sees the status of `false`.
 */

export type Redirect = { fd: 1 | 2; to: string; append: boolean } | { fd: 2; toStdout: true } | { fd: 0; from: string };
export type Command = { words: string[]; redirects: Redirect[] };
/** `when`: run after the previous item always (`;`), on success (`&&`) or on failure (`||`). */
export type ListItem = { when: ";" | "&&" | "||"; pipeline: Command[] };
export type Script = { items: ListItem[] } | { error: string };

/** A private-use character no typed line holds: it brackets a variable's name until it is expanded. */
const MARK = "\uE000";

/** Expands the variable markers of a word with the values at the time its command runs. */
export function expandWord(word: string, value: (name: string) => string): string {
  return word.replace(/\uE000([^\uE000]*)\uE000/g, (_, name: string) => value(name));
}

/** An unterminated quote (shell-quote would close it silently, `sh` refuses the line). */
function unterminated(line: string): boolean {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"') i++;
    } else if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
  }
  return quote !== null;
}

export function parseScript(line: string): Script {
  if (unterminated(line)) return { error: "syntax error: unterminated quoted string" };
  const tokens = parse(line, (name) => `${MARK}${name}${MARK}`);
  const items: ListItem[] = [];
  let when: ListItem["when"] = ";";
  let pipeline: Command[] = [];
  let command: Command = { words: [], redirects: [] };
  const endCommand = () => {
    if (command.words.length === 0 && command.redirects.length === 0) return false;
    pipeline.push(command);
    command = { words: [], redirects: [] };
    return true;
  };
  const endItem = () => {
    endCommand();
    if (pipeline.length > 0) items.push({ when, pipeline });
    pipeline = [];
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === undefined) break;
    if (typeof token === "string") {
      command.words.push(token);
      continue;
    }
    if ("comment" in token) break;
    if ("pattern" in token) {
      // Globs are taken as written: the sandbox has few files and `sh` keeps unmatched patterns too.
      command.words.push(token.pattern);
      continue;
    }
    const op = token.op;
    if (op === "|") {
      if (!endCommand()) return { error: "syntax error: unexpected |" };
      continue;
    }
    if (op === ";" || op === "&" || op === "&&" || op === "||") {
      if ((op === "&&" || op === "||") && command.words.length === 0 && pipeline.length === 0) {
        return { error: `syntax error: unexpected ${op}` };
      }
      endItem();
      when = op === "&&" || op === "||" ? op : ";";
      continue;
    }
    if (op === ">" || op === ">>" || op === "<" || op === ">&") {
      // `2>` and `2>&1`: shell-quote gives the descriptor as the word before the operator.
      const fd = command.words.at(-1) === "2" && op !== "<" ? command.words.pop() && 2 : op === "<" ? 0 : 1;
      const target = tokens[++i];
      if (typeof target !== "string") return { error: `syntax error: a file name must follow ${op}` };
      if (op === ">&") {
        if (fd === 2 && target === "1") command.redirects.push({ fd: 2, toStdout: true });
        else return { error: `syntax error: only 2>&1 is supported, not ${fd}>&${target}` };
      } else if (fd === 0) command.redirects.push({ fd: 0, from: target });
      else command.redirects.push({ fd: fd as 1 | 2, to: target, append: op === ">>" });
      continue;
    }
    return { error: `${op} is not supported in the sandboxed shell` };
  }
  if ((when === "&&" || when === "||") && command.words.length === 0 && pipeline.length === 0) {
    return { error: `syntax error: unexpected end of line after ${when}` };
  }
  endItem();
  return { items };
}
