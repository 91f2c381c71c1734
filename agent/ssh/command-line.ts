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
