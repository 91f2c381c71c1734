/**
 * @module Splits an SSH exec request, a forced `command="…"` or a REPL line into argv the way a
 * POSIX shell splits words (POSIX.1-2017 XCU §2.2 quoting): blanks separate words, `'…'` is
 * literal, `"…"` keeps `\"`, `\\`, `\$` and `` \` `` escapes, and a backslash outside quotes
 * escapes the next character. There is no expansion, globbing, pipe or redirection: unquoted
 * `|`, `;`, `&`, `<`, `>` and `` ` `` are refused with a message instead of being passed on as
 * arguments (they would surprise whoever typed them). A leading `rackside` word is dropped, so
 * `ssh rack1 rackside get hosts` and `ssh rack1 get hosts` do the same.
 * @pure
 */

/** The argv, or why the line could not be split. */
export type SplitResult = { argv: string[] } | { error: string };

const OPERATORS = new Set(['|', ';', '&', '<', '>', '`']);

/** Splits `line` into words; see the module comment for the rules. */
export function splitCommandLine(line: string): SplitResult {
  const argv: string[] = [];
  let word: string | undefined;
  let i = 0;
  const append = (text: string): void => { word = (word ?? '') + text; };
  while (i < line.length) {
    const c = line.charAt(i);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (word !== undefined) argv.push(word);
      word = undefined;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { error: 'unterminated single quote' };
      append(line.slice(i + 1, end));
      i = end + 1;
    } else if (c === '"') {
      let text = '';
      i++;
      for (;;) {
        if (i >= line.length) return { error: 'unterminated double quote' };
        const d = line.charAt(i);
        if (d === '"') break;
        const next = line.charAt(i + 1);
        if (d === '\\' && (next === '"' || next === '\\' || next === '$' || next === '`')) {
          text += next;
          i += 2;
        } else if (d === '\\' && next === '\n') {
          i += 2;
        } else {
          text += d;
          i++;
        }
      }
      append(text);
      i++;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return { error: 'trailing backslash' };
      const next = line.charAt(i + 1);
      if (next !== '\n') append(next);
      i += 2;
    } else if (OPERATORS.has(c)) {
      return { error: `"${c}" is not supported: commands run without a shell (no pipes, redirections or lists); quote it to pass it as an argument` };
    } else {
      append(c);
      i++;
    }
  }
  if (word !== undefined) argv.push(word);
  if (argv[0] === 'rackside') argv.shift();
  return { argv };
}

/** Quotes argv for display in audit lines and messages (the inverse of {@link splitCommandLine}). */
export function joinCommandLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Options whose value is a secret (`--token X`, `--token=X`; `--password` is refused by the CLI but may still be typed). */
const SECRET_OPTIONS = new Set(['--token', '--password']);
/** Environment-style words carrying a secret (`RACKSIDE_TOKEN=…`, `RACKSIDE_BMC_PASSWORD=…`). */
const SECRET_ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*(?:TOKEN|PASSWORD|SECRET))=/i;
/** What a redacted value becomes. */
export const REDACTED_ARGUMENT = '[redacted]';

/**
 * argv for audit events and logs: the value of every `--token`/`--password` option (both
 * `--opt VALUE` and `--opt=VALUE`) and of `…TOKEN=`/`…PASSWORD=`/`…SECRET=` words replaced by
 * {@link REDACTED_ARGUMENT}. The command itself still runs with the real argv.
 */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    const eq = word.indexOf('=');
    const assignment = SECRET_ASSIGNMENT.exec(word);
    if (SECRET_OPTIONS.has(word)) {
      out.push(word);
      if (i + 1 < argv.length) {
        out.push(REDACTED_ARGUMENT);
        i++;
      }
    } else if (eq > 0 && SECRET_OPTIONS.has(word.slice(0, eq))) out.push(`${word.slice(0, eq)}=${REDACTED_ARGUMENT}`);
    else if (assignment?.[1] !== undefined) out.push(`${assignment[1]}=${REDACTED_ARGUMENT}`);
    else out.push(word);
  }
  return out;
}

/** A command line as it may be shown: split, {@link redactArgv}, joined; a line that does not split is not shown. */
export function redactCommandLine(line: string): string {
  const split = splitCommandLine(line);
  return 'error' in split ? `(not shown: ${split.error})` : joinCommandLine(redactArgv(split.argv));
}
